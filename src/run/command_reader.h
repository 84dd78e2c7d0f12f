#pragma once
// The runner's command channel: lines from the worker on a pipe.
//
// Between commands the reader spins on a non-blocking read before it sleeps in poll(). Why: a call's
// time is the worker's round trip minus the round trip of an empty call (docs/judge.md), and a process
// woken from sleep by the worker's write pays the CPU's wake-up latency inside that round trip — a
// latency that grows with how long it slept (deeper idle states), so the short calibration pings did
// not measure what a long call paid. Spinning makes both wake-ups the same (near zero). The cost is
// one busy core per evaluating runner while its session lasts. The spin yields on every empty read, so
// the kernel's count of the runner's CPU time, which the worker reads from outside, stays current.
#include <chrono>
#include <optional>
#include <string>

namespace cutegen {

class CommandReader {
 public:
  // `fd` is made non-blocking. `spin`: how long to poll for input before sleeping in poll().
  CommandReader(int fd, std::chrono::microseconds spin);
  // The next line without its '\n'; nullopt at end of input or on a read error.
  std::optional<std::string> next();
  // Times next() found no input and slept in poll() (for tests).
  int sleeps() const { return sleeps_; }

 private:
  int fd_;
  std::chrono::microseconds spin_;
  std::string buffer_;
  int sleeps_ = 0;
};

}  // namespace cutegen
