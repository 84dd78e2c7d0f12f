#include "llm/http_retry.h"

#include <curl/curl.h>

#include <algorithm>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "llm/api_errors.h"

namespace cutegen {
using std::chrono::milliseconds;

void real_sleep(milliseconds duration) { std::this_thread::sleep_for(duration); }

bool is_retryable_status(long status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

std::optional<milliseconds> requested_retry_delay(const HttpResponse& response) {
  auto parse = [](const std::string& text) -> std::optional<double> {
    if (text.empty()) return std::nullopt;
    try {
      std::size_t used = 0;
      double v = std::stod(text, &used);
      if (used != text.size() || !(v >= 0)) return std::nullopt;
      return v;
    } catch (const std::exception&) {  // an HTTP date, or garbage: the backoff applies instead
      return std::nullopt;
    }
  };
  // Clamped before the cast: "inf" or "1e30" would overflow long long (undefined). A year is far past
  // any cap the retry loop applies anyway.
  auto to_ms = [](double ms) { return milliseconds(static_cast<long long>(std::min(ms, 3.2e10))); };
  if (auto ms = parse(response.header("retry-after-ms"))) return to_ms(*ms);
  std::string retry_after = response.header("retry-after");
  if (auto s = parse(retry_after)) return to_ms(*s * 1000);
  // The HTTP-date form ("Wed, 21 Oct 2015 07:28:00 GMT"); libcurl parses every date format HTTP allows.
  if (!retry_after.empty()) {
    time_t when = curl_getdate(retry_after.c_str(), nullptr);
    if (when != -1) {
      auto wait = std::chrono::system_clock::from_time_t(when) - std::chrono::system_clock::now();
      return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(wait));
    }
  }
  return std::nullopt;
}

milliseconds backoff_delay(const RetryPolicy& policy, int failed_attempts, double unit_random) {
  double base = static_cast<double>(policy.initial_backoff.count());
  for (int i = 1; i < failed_attempts && base < policy.max_backoff.count(); ++i) base *= 2;
  base = std::min(base, static_cast<double>(policy.max_backoff.count()));
  return milliseconds(static_cast<long long>(base / 2 + unit_random * base / 2));
}

std::string summarize_outcomes(const std::vector<std::string>& outcomes) {
  // Runs of the same outcome are counted, not repeated: "HTTP 500, 4 times" reads better than four copies
  // of a long connection error.
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < outcomes.size();) {
    std::size_t j = i;
    while (j < outcomes.size() && outcomes[j] == outcomes[i]) ++j;
    parts.push_back(j - i == 1 ? outcomes[i] : fmt::format("{}, {} times", outcomes[i], j - i));
    i = j;
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

Result<HttpCallResult> post_with_retries(HttpTransport& transport, const HttpRequest& request, const RetryPolicy& policy,
                                         const RetryHooks& hooks) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int max_attempts = std::max(1, policy.max_attempts);
  std::vector<std::string> outcomes;
  std::string last_body;
  enum class Stop { attempts, not_retryable, deadline } stop = Stop::attempts;
  const auto start = hooks.now();
  auto elapsed = [&] { return std::chrono::duration_cast<milliseconds>(hooks.now() - start); };
  HttpRequest attempt_request = request;
  for (int attempt = 1;; ++attempt) {
    milliseconds left = policy.deadline - elapsed();
    if (left <= milliseconds(0)) {
      stop = Stop::deadline;
      break;
    }
    attempt_request.timeout = std::min(request.timeout, left);
    auto response = transport.post(attempt_request);
    std::optional<milliseconds> asked;
    if (!response) {
      outcomes.push_back(response.error().message);
      if (response.error().kind == ErrorKind::not_retryable) {
        stop = Stop::not_retryable;
        break;
      }
    } else if (!is_retryable_status(response->status)) {
      return HttpCallResult{std::move(*response), attempt};
    } else {
      outcomes.push_back(fmt::format("HTTP {}", response->status));
      last_body = response->body;
      asked = requested_retry_delay(*response);
    }
    if (attempt >= max_attempts) break;
    milliseconds delay = asked ? std::min(*asked, policy.max_retry_after) : backoff_delay(policy, attempt, unit(rng));
    if (elapsed() + delay >= policy.deadline) {
      stop = Stop::deadline;
      break;
    }
    if (hooks.progress)
      hooks.progress(fmt::format("{}: {}; retrying in {:.1f} s (attempt {} of {})", hooks.label, outcomes.back(),
                                 delay.count() / 1000.0, attempt + 1, max_attempts));
    hooks.sleep(delay);
  }
  std::string message = fmt::format("{}: POST {} failed after {} attempt{} ({})", hooks.label, request.url,
                                    outcomes.size(), outcomes.size() == 1 ? "" : "s", summarize_outcomes(outcomes));
  if (!last_body.empty()) message += fmt::format("; last response: {}", api_error_text(last_body));
  switch (stop) {
    case Stop::not_retryable:
      return Error{message + "; not retried, as it would fail the same way: check the endpoint URL and its TLS setup"};
    case Stop::deadline:
      return Error{message + fmt::format("; gave up after {:.0f} s, at the call deadline of {:.0f} s "
                                         "(llm.call_deadline_s): check that the server is up, or raise the deadline",
                                         elapsed().count() / 1000.0, policy.deadline.count() / 1000.0)};
    case Stop::attempts:
      break;
  }
  message += "; check that the server is up and reachable, then try again (llm.max_attempts sets the number of tries)";
  return Error{message};
}

}  // namespace cutegen
