#pragma once
// The real HttpTransport: libcurl.
#include "llm/http_transport.h"

namespace cutegen {

// One libcurl easy handle per call, so concurrent calls share nothing; libcurl's global state is set up
// once, thread-safely, on first use.
class CurlTransport final : public HttpTransport {
 public:
  Result<HttpResponse> post(const HttpRequest& request) override;
};

}  // namespace cutegen
