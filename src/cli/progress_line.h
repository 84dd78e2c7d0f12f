#pragma once
// Progress of a long run: on a terminal one status line redrawn in place (phase, step, best speedup,
// SOL%, tokens, $) with event lines scrolling above it; otherwise plain timestamped lines for logs.
#include <string>

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

}  // namespace cutegen::cli
