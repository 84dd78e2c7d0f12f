#pragma once
// Turning what an API sent back into one line a user can act on, without ever quoting a key.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "llm/http_transport.h"

namespace cutegen {

// The first `limit` characters of a body, newlines flattened, marked when cut.
std::string body_excerpt(std::string_view body, std::size_t limit = 200);

// The error for a successful response that is not an answer's shape; `api` names the backend.
Error unexpected_response(std::string_view api, std::string_view what, std::string_view body);

// A count from a usage object; absent, null or not a number is 0 (servers differ in what they report).
long long usage_count(const nlohmann::json& usage, const char* key);

// The provider's own explanation ({"error": {"message": ...}} in both APIs, or {"error": "..."} in some
// compatible servers), else the body's excerpt.
std::string api_error_text(const std::string& body);

struct KeyInfo {
  std::string env_var;  // OPENAI_API_KEY, ...
  bool set = false;
};

// The error for a final non-2xx response. 401/403 name the environment variable to set.
Error http_status_error(const std::string& label, const std::string& url, const HttpResponse& response,
                        const KeyInfo& key);

// Every occurrence of `secret` replaced: servers sometimes echo what they were sent.
std::string redact(std::string text, const std::string& secret);
std::string redact(std::string text, const std::vector<std::string>& secrets);

}  // namespace cutegen
