#pragma once
// Progress of a long run: on a terminal one status line redrawn in place (phase, step, best speedup,
// SOL%, tokens, $) with event lines scrolling above it; otherwise plain timestamped lines for logs.
#include <string>
#include <vector>

#include "agent/loop.h"

namespace cutegen::cli {

class ProgressLine {
 public:
  explicit ProgressLine(bool terminal) : terminal_(terminal) {}
  void update(const LoopStatus& status, const std::string& line);
  void finish();
  static std::string status_text(const LoopStatus& s);

 private:
  bool terminal_;
  bool drawn_ = false;
};

// Several status lines at once (cutegen bench: one per lane and the suite's), by the same rules: on
// a terminal redrawn in place below the scrolling event lines; otherwise only the event lines, each
// with a timestamp and the first status line (the summary), so a batch log stays one line per event.
class ProgressBoard {
 public:
  explicit ProgressBoard(bool terminal) : terminal_(terminal) {}
  // `event` may be empty (a redraw on a clock tick; nothing is written off a terminal).
  void update(const std::vector<std::string>& status, const std::string& event);
  void finish();

 private:
  bool terminal_;
  size_t drawn_ = 0;  // status lines on screen
};

}  // namespace cutegen::cli
