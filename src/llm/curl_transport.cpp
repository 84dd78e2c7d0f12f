#include "llm/curl_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <regex>

#include <fmt/format.h>

#include "common/version.h"

namespace cutegen {
namespace {

// A runaway server must not exhaust our memory; no real answer comes near this.
constexpr std::size_t kMaxBodyBytes = 64u << 20;

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

struct Sink {
  HttpResponse response;
  bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  if (sink->response.body.size() + size * n > kMaxBodyBytes) {
    sink->too_large = true;
    return 0;  // makes libcurl abort the transfer
  }
  sink->response.body.append(data, size * n);
  return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::string line(data, size * n);
  // A status line starts a new header block (after a 100 Continue, say): keep only the final response's.
  if (line.rfind("HTTP/", 0) == 0) {
    sink->response.headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  sink->response.headers[name] = trim(line.substr(colon + 1));
  return size * n;
}

}  // namespace

std::string HttpResponse::header(const std::string& lower_case_name) const {
  auto it = headers.find(lower_case_name);
  return it == headers.end() ? "" : it->second;
}

Result<HttpResponse> CurlTransport::post(const HttpRequest& request) {
  global_init_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> handle(curl_easy_init(), &curl_easy_cleanup);
  if (!handle) return Error{"libcurl could not create a handle (out of memory?)"};
  curl_slist* raw_headers = nullptr;
  for (const auto& [name, value] : request.headers) raw_headers = curl_slist_append(raw_headers, (name + ": " + value).c_str());
  // Without this libcurl waits for a "100 Continue" before sending a large prompt: a needless round trip.
  raw_headers = curl_slist_append(raw_headers, "Expect:");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(raw_headers, &curl_slist_free_all);

  Sink sink;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  std::string user_agent = std::string("cutegen/") + CUTEGEN_VERSION;
  CURL* h = handle.get();
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_USERAGENT, user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  // Signals are process-wide; with several calls in flight on several threads, timeouts must not use them.
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode

  CURLcode rc = curl_easy_perform(h);
  if (rc != CURLE_OK) {
    if (sink.too_large)
      return Error{fmt::format("response larger than {} MiB", kMaxBodyBytes >> 20), ErrorKind::not_retryable};
    std::string detail = trim(error_buffer[0] ? std::string(error_buffer) : curl_easy_strerror(rc));
    // libcurl says how long it tried ("... port 443 after 1 ms: ..."); that varies from one attempt
    // to the next, and would keep the retry summary from counting identical failures together.
    detail = std::regex_replace(detail, std::regex(R"( after [0-9]+ ms)"), "");
    long os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    // libcurl's own text says "Couldn't connect to server"; the errno says why (refused, unreachable).
    if (os_errno != 0 && (rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR))
      detail += fmt::format(" ({})", std::strerror(static_cast<int>(os_errno)));
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY)
      return Error{"cannot connect: " + detail};
    // Failures of the request itself, not of the network: trying again only repeats them.
    switch (rc) {
      case CURLE_UNSUPPORTED_PROTOCOL:
      case CURLE_URL_MALFORMAT:
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM:
      case CURLE_SSL_CIPHER:
      case CURLE_BAD_CONTENT_ENCODING:
        return Error{detail, ErrorKind::not_retryable};
      default:
        return Error{detail};
    }
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  sink.response.status = status;
  return std::move(sink.response);
}

}  // namespace cutegen
