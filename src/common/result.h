#pragma once
// Errors are values: every operation that can fail for a reason a user can act on returns Result<T>.
// std::expected is C++23 and absent from g++ 12's libstdc++, so this is the minimal subset we need.
#include <string>
#include <utility>
#include <variant>

namespace cutegen {

// What a caller may need to tell apart without reading the message (whose wording is for people).
enum class ErrorKind {
  general,
  budget_exhausted,  // an LLM budget refused the call before it was made: stop the task cleanly
  not_retryable,     // the same request would fail the same way again (bad URL, TLS verification, ...)
  cannot_resume,     // a run log that does not fit this run: resuming again will not help
  truncated_repeatedly,  // answers keep being cut off at the token limit: asking again would repeat it
  problem_file,      // the problem file is at fault (it does not import, build or run): fix the file
  machine_busy,      // the CPU was too busy to measure on (the judge's processes waited for it), or another program
                     // worked on the GPU: later, or with less beside
};

struct Error {
  std::string message;  // one line a user can act on: what failed and what to do about it
  ErrorKind kind = ErrorKind::general;
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor): implicit on purpose
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void> spelled without a template specialisation dance.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace cutegen
