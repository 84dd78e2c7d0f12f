#pragma once
// What the two HTTP backends (OpenAI-compatible, Anthropic) share: endpoint, key, timeouts, retries,
// and the one call that turns an HTTP exchange into a response body or a one-line error.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "llm/api_errors.h"
#include "llm/http_retry.h"
#include "llm/http_transport.h"

namespace cutegen {

struct HttpBackendOptions {
  std::string model;
  std::string base_url;  // no trailing slash needed
  KeyInfo key;           // which environment variable holds the key, and whether it was set
  std::string api_key;   // read from that variable; empty: no auth header (local servers need none)
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds timeout{300'000};  // per attempt
  RetryPolicy retry;
  SleepFn sleep = real_sleep;
  ProgressFn progress;
  NowFn now = steady_now;
};

// base_url + path, with exactly one slash between them.
std::string join_url(const std::string& base_url, const std::string& path);

// POSTs `body` with retries. 2xx: the response; anything else: an Error naming the status and the API's
// own explanation (401/403 name the key's variable). Every message has the key redacted.
Result<HttpCallResult> post_api(HttpTransport& transport, const HttpBackendOptions& options, const std::string& label,
                                const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
                                const std::string& body);

}  // namespace cutegen
