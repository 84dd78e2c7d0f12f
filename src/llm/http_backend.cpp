#include "llm/http_backend.h"

namespace cutegen {

std::string join_url(const std::string& base_url, const std::string& path) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return path.empty() || path.front() == '/' ? base + path : base + "/" + path;
}

Result<HttpCallResult> post_api(HttpTransport& transport, const HttpBackendOptions& options, const std::string& label,
                                const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
                                const std::string& body) {
  HttpRequest request;
  request.url = url;
  request.headers = std::move(headers);
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = body;
  request.connect_timeout = options.connect_timeout;
  request.timeout = options.timeout;
  RetryHooks hooks{label, options.sleep, {}, options.now};
  if (options.progress) {
    hooks.progress = [&options](const std::string& line) { options.progress(redact(line, options.api_key)); };
  }
  auto call = post_with_retries(transport, request, options.retry, hooks);
  if (!call) return Error{redact(call.error().message, options.api_key)};
  if (call->response.status < 200 || call->response.status >= 300) {
    auto error = http_status_error(label, url, call->response, options.key);
    return Error{redact(error.message, options.api_key)};
  }
  return call;
}

}  // namespace cutegen
