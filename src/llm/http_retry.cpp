#include "llm/http_retry.h"

#include <algorithm>
#include <random>
#include <thread>

#include <fmt/format.h>

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
  if (auto ms = parse(response.header("retry-after-ms"))) return milliseconds(static_cast<long long>(*ms));
  if (auto s = parse(response.header("retry-after"))) return milliseconds(static_cast<long long>(*s * 1000));
  return std::nullopt;
}

milliseconds backoff_delay(const RetryPolicy& policy, int failed_attempts, double unit_random) {
  double base = static_cast<double>(policy.initial_backoff.count());
  for (int i = 1; i < failed_attempts && base < policy.max_backoff.count(); ++i) base *= 2;
  base = std::min(base, static_cast<double>(policy.max_backoff.count()));
  return milliseconds(static_cast<long long>(base / 2 + unit_random * base / 2));
}

Result<HttpCallResult> post_with_retries(HttpTransport& transport, const HttpRequest& request, const RetryPolicy& policy,
                                         const RetryHooks& hooks) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int max_attempts = std::max(1, policy.max_attempts);
  std::vector<std::string> outcomes;
  std::string last_body;
  for (int attempt = 1;; ++attempt) {
    auto response = transport.post(request);
    std::optional<milliseconds> asked;
    if (!response) {
      outcomes.push_back(response.error().message);
    } else if (!is_retryable_status(response->status)) {
      return HttpCallResult{std::move(*response), attempt};
    } else {
      outcomes.push_back(fmt::format("HTTP {}", response->status));
      last_body = response->body;
      asked = requested_retry_delay(*response);
    }
    if (attempt >= max_attempts) break;
    milliseconds delay = asked ? std::min(*asked, policy.max_retry_after) : backoff_delay(policy, attempt, unit(rng));
    if (hooks.progress)
      hooks.progress(fmt::format("{}: {}; retrying in {:.1f} s (attempt {} of {})", hooks.label, outcomes.back(),
                                 delay.count() / 1000.0, attempt + 1, max_attempts));
    hooks.sleep(delay);
  }
  std::string message = fmt::format("{}: POST {} failed after {} attempt{} ({})", hooks.label, request.url,
                                    outcomes.size(), outcomes.size() == 1 ? "" : "s", fmt::join(outcomes, "; "));
  if (!last_body.empty()) message += fmt::format("; last response: {}", api_error_text(last_body));
  return Error{message};
}

}  // namespace cutegen
