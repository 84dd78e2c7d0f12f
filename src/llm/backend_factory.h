#pragma once
// Builds the configured backend (wrapped for recording when asked) and the client around it.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/process.h"
#include "llm/hooks.h"
#include "llm/http_transport.h"
#include "llm/llm_client.h"
#include "llm/llm_config.h"

namespace cutegen {

struct BackendDeps {
  HttpTransport& http;
  ProcessRunner& runner;
  SleepFn sleep = real_sleep;
  ProgressFn progress;  // retries, manual waiting; nothing when empty
};

inline constexpr const char* kOpenAiDefaultBaseUrl = "https://api.openai.com/v1";
inline constexpr const char* kAnthropicDefaultBaseUrl = "https://api.anthropic.com";

// Reads the base URL and key from the environment here, once; the key is kept in memory only.
Result<std::unique_ptr<LlmBackend>> make_backend(const LlmConfig& config, const BackendDeps& deps);

// The values of the key variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, llm.api_key_env) that are set: what
// must never appear in an error. Values under 8 characters are left out (redacting them would garble text).
std::vector<std::string> environment_secrets(const LlmConfig& config);

// make_backend plus the price table (config.prices, else the default table) and the run budget.
Result<std::unique_ptr<LlmClient>> make_llm_client(const LlmConfig& config, const BackendDeps& deps,
                                                   std::optional<std::filesystem::path> usage_log = std::nullopt);

}  // namespace cutegen
