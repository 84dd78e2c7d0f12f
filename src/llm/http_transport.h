#pragma once
// The network boundary of the HTTP backends. CurlTransport (curl_transport.h) is the real one; tests run
// it against a local server, and anything may substitute a fake.
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace cutegen {

struct HttpRequest {
  std::string url;
  // May carry an API key: never log, store or quote them.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds timeout{300'000};  // the whole exchange of one attempt
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string header(const std::string& lower_case_name) const;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Every HTTP status is a response. An Error means no response arrived (refused, reset, timed out,
  // TLS failure); its message says which, in one line, and never contains the request's headers.
  virtual Result<HttpResponse> post(const HttpRequest& request) = 0;
};

}  // namespace cutegen
