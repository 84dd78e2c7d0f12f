#pragma once
// Anthropic Messages API (POST {base}/v1/messages), with extended thinking when configured.
#include <nlohmann/json.hpp>

#include "llm/http_backend.h"
#include "llm/llm_types.h"

namespace cutegen {

// The API requires max_tokens; this is sent when neither the request nor the config sets one.
inline constexpr int kAnthropicDefaultMaxTokens = 16000;
inline constexpr int kAnthropicMinThinkingBudget = 1024;  // the API's own minimum
inline constexpr const char* kAnthropicVersion = "2023-06-01";

class AnthropicBackend final : public LlmBackend {
 public:
  AnthropicBackend(HttpTransport& transport, HttpBackendOptions options);

  std::string kind() const override { return "anthropic"; }
  std::string model() const override { return options_.model; }
  std::optional<int> default_max_tokens() const override { return kAnthropicDefaultMaxTokens; }
  Result<LlmResponse> complete(const LlmRequest& request) override;

  // An Error for parameters the API would reject (thinking budget not below max_tokens, ...).
  Result<nlohmann::json> request_body(const LlmRequest& request) const;
  static Result<LlmResponse> parse_response(const std::string& body, const std::string& requested_model);

 private:
  HttpTransport& transport_;
  HttpBackendOptions options_;
};

}  // namespace cutegen
