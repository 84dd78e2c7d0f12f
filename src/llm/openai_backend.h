#pragma once
// OpenAI Chat Completions (POST {base}/chat/completions): the hosted API and every compatible server
// (vLLM, SGLang, Ollama, llama.cpp server) by base URL.
#include <nlohmann/json.hpp>

#include "llm/http_backend.h"
#include "llm/llm_types.h"

namespace cutegen {

class OpenAiBackend final : public LlmBackend {
 public:
  // `max_tokens_param`: "max_completion_tokens" (current API) or "max_tokens" (older compatible servers).
  OpenAiBackend(HttpTransport& transport, HttpBackendOptions options,
                std::string max_tokens_param = "max_completion_tokens");

  std::string kind() const override { return "openai"; }
  std::string model() const override { return options_.model; }
  Result<LlmResponse> complete(const LlmRequest& request) override;

  nlohmann::json request_body(const LlmRequest& request) const;
  // `requested_model` names the answer when the server does not.
  static Result<LlmResponse> parse_response(const std::string& body, const std::string& requested_model);

 private:
  HttpTransport& transport_;
  HttpBackendOptions options_;
  std::string max_tokens_param_;
};

}  // namespace cutegen
