#pragma once
// Turning what an API sent back into one line a user can act on, without ever quoting a key.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "llm/http_transport.h"

namespace cutegen {

// The first `limit` characters of a body on one line: newlines flattened, every other control character
// escaped (terminal_safe: a reply must not steer the terminal that shows the error), marked when cut.
std::string body_excerpt(std::string_view body, std::size_t limit = 200);

// The error for a successful response that is not an answer's shape; `api` names the backend.
Error unexpected_response(std::string_view api, std::string_view what, std::string_view body);

// The largest token count a usage object may report (2^53: exact as a double, and sums of a run's
// counts cannot overflow). Far above any real call, so a server claiming 10M tokens is still charged.
inline constexpr long long kMaxUsageCount = 1LL << 53;

// A count from a usage object; absent or null is 0 (servers differ in what they report), and so is
// every count of a `usage` that is not an object. Error (naming the key and the value): a count that is
// not a whole number from 0 to kMaxUsageCount. Budgets charge what a server reports, so a negative
// count would give spent tokens back and a string would be charged as nothing.
Result<long long> usage_count(const nlohmann::json& usage, const char* key);

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
