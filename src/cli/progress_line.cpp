#include "cli/progress_line.h"

#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "common/terminal_text.h"

namespace cutegen::cli {

std::string ProgressLine::status_text(const LoopStatus& s) {
  std::string t = fmt::format("[{}", to_string(s.phase));
  if (s.phase == LoopPhase::optimize || s.step > 0) t += fmt::format(" step {}/{}", s.step, s.max_steps);
  t += "]";
  if (s.best_ms) t += fmt::format(" best {:.4f} ms", *s.best_ms);
  if (s.best_speedup_eager) t += fmt::format(" {:.2f}x eager", *s.best_speedup_eager);
  if (s.best_sol_pct) t += fmt::format(" SOL {:.0f}%", *s.best_sol_pct);
  t += fmt::format(" | {} tok ${:.3f}", s.tokens, s.cost_usd);
  if (s.replaying) t += " (replaying log)";
  return t;
}

// Event lines quote what the LLM, the judge and file names said: their control characters are shown,
// never obeyed (an ESC or CR in them would rewrite the status line or the screen).
void ProgressLine::update(const LoopStatus& status, const std::string& raw_line) {
  const std::string line = terminal_safe(raw_line, LineBreaks::keep);
  if (terminal_) {
    // Clear the status line, print the event above it, redraw the status.
    fmt::print(stderr, "\r\033[K{}\n{}", line, status_text(status));
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  std::time_t now = std::time(nullptr);
  char stamp[16];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
  fmt::print(stderr, "{} {} {}\n", stamp, status_text(status), line);
}

void ProgressLine::finish() {
  if (terminal_ && drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

void ProgressBoard::update(const std::vector<std::string>& status, const std::string& event) {
  if (terminal_) {
    std::string out;
    // Back to the first status line, clearing each on the way up.
    for (size_t i = 0; i < drawn_; ++i) out += i == 0 ? "\r\033[K" : "\033[F\033[K";
    if (!event.empty()) out += terminal_safe(event, LineBreaks::keep) + "\n";
    // One screen line each (task names are file names): the redraw above counts on it.
    for (size_t i = 0; i < status.size(); ++i) out += terminal_safe(status[i]) + (i + 1 < status.size() ? "\n" : "");
    fmt::print(stderr, "{}", out);
    std::fflush(stderr);
    drawn_ = status.size();
    return;
  }
  if (event.empty()) return;
  std::time_t now = std::time(nullptr);
  char stamp[16];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
  fmt::print(stderr, "{} {}{}\n", stamp, terminal_safe(event, LineBreaks::keep),
             status.empty() ? "" : "  [" + terminal_safe(status.front()) + "]");
}

void ProgressBoard::finish() {
  if (terminal_ && drawn_ > 0) fmt::print(stderr, "\n");
  drawn_ = 0;
}

}  // namespace cutegen::cli
