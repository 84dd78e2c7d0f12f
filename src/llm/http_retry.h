#pragma once
// Retries of one HTTP POST: exponential backoff with jitter on connection errors, 408, 409, 429 and
// 5xx, honouring Retry-After; a bounded number of attempts and a final error listing what each got.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "llm/hooks.h"
#include "llm/http_transport.h"

namespace cutegen {

struct RetryPolicy {
  int max_attempts = 4;  // the first try included
  std::chrono::milliseconds initial_backoff{1'000};
  std::chrono::milliseconds max_backoff{30'000};
  std::chrono::milliseconds max_retry_after{60'000};  // a server asking for longer still gets only this
  // The whole call, attempts and waits together: no attempt runs past it (its timeout is cut to what
  // is left) and no retry starts whose wait would reach it. Without it four attempts of a 300 s
  // timeout and their backoff could hold one call for over 20 minutes.
  std::chrono::milliseconds deadline{900'000};
};

bool is_retryable_status(long status);

// The wait a response asks for: OpenAI's retry-after-ms, else Retry-After (delta-seconds or HTTP-date; a
// date in the past asks for no wait). nullopt when absent or unreadable (then the backoff applies).
std::optional<std::chrono::milliseconds> requested_retry_delay(const HttpResponse& response);

// Backoff before attempt `failed_attempts + 1`: initial * 2^(failed_attempts-1), capped, then scaled into
// [half, full] by `unit_random` in [0, 1) so that many clients hit by one outage do not retry in step.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int failed_attempts, double unit_random);

// "HTTP 500, 3 times; cannot connect: ..." for the final error.
std::string summarize_outcomes(const std::vector<std::string>& outcomes);

struct HttpCallResult {
  HttpResponse response;  // 2xx, or a status that retrying cannot fix (400, 401, 404, ...)
  int attempts = 1;
};

struct RetryHooks {
  std::string label;  // "openai": starts every message
  SleepFn sleep = real_sleep;
  ProgressFn progress;
  NowFn now = steady_now;
};

// An Error when every attempt failed with something retryable, one failed with something that cannot
// be retried, or the deadline came first; it names each attempt's outcome.
Result<HttpCallResult> post_with_retries(HttpTransport& transport, const HttpRequest& request, const RetryPolicy& policy,
                                         const RetryHooks& hooks);

}  // namespace cutegen
