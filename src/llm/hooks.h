#pragma once
// Callbacks the LLM layer takes instead of touching the clock and the terminal itself, so tests run
// fast and quiet and the CLI decides where progress goes.
#include <chrono>
#include <functional>
#include <string>

namespace cutegen {

// Retry waits go through this; tests pass one that records the wait and returns at once.
using SleepFn = std::function<void(std::chrono::milliseconds)>;
void real_sleep(std::chrono::milliseconds duration);

// The clock call deadlines are measured on; tests pass one that the recorded sleeps advance.
using NowFn = std::function<std::chrono::steady_clock::time_point()>;
inline std::chrono::steady_clock::time_point steady_now() { return std::chrono::steady_clock::now(); }

// One line of human progress ("HTTP 429; retrying in 2.0 s"); the CLI prints it on stderr.
using ProgressFn = std::function<void(const std::string&)>;

}  // namespace cutegen
