#pragma once
// Which backend to use and how: from a spec string (--llm openai:MODEL, anthropic:MODEL, exec:COMMAND,
// replay:DIR, manual:DIR) and/or the config file's "llm" object. Unknown keys are errors.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/budget.h"
#include "llm/http_retry.h"
#include "llm/llm_types.h"

namespace cutegen {

struct LlmConfig {
  std::string backend;  // openai | anthropic | exec | replay | manual; empty until something names one
  std::string model;    // openai/anthropic: required; exec/manual: optional label
  std::string command;  // exec
  std::filesystem::path dir;  // replay, manual
  std::string base_url;       // openai/anthropic; empty: $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, else the vendor's
  std::string api_key_env;    // the variable holding the key; empty: OPENAI_API_KEY / ANTHROPIC_API_KEY
  std::string max_tokens_param = "max_completion_tokens";  // openai: or "max_tokens" for older servers
  GenerationParams params;  // defaults for every request
  std::chrono::milliseconds connect_timeout{10'000};
  std::optional<std::chrono::milliseconds> timeout;  // per attempt / command / wait; empty: backend default
  std::chrono::milliseconds poll_interval{1'000};    // manual
  RetryPolicy retry;  // with the call deadline (llm.call_deadline_s)
  std::optional<std::filesystem::path> record_dir;
  std::optional<std::filesystem::path> prices;  // empty: PriceTable::default_path()
  BudgetLimits budget;       // per run
  BudgetLimits task_budget;  // per task (the agent loop applies it)
};

// "openai:gpt-5" etc. Replaces the backend and what identifies it (model, command, dir); keeps the rest,
// so a config's timeouts and parameters survive `--llm` on the command line.
Status apply_llm_spec(LlmConfig& config, const std::string& spec);

// Keys of the "llm" object that run a program (command), decide where prompts and a key go (base_url,
// api_key_env) or name files to read or write (prices, record): honoured only from a config the user
// named or owns, never from a project's ./cutegen.json (see the CLI's config loading).
bool llm_key_needs_trust(const std::string& key);

// Applies a config file's "llm" object onto `base`.
Result<LlmConfig> apply_llm_config(LlmConfig base, const nlohmann::json& section);

// Everything a backend needs is there and nothing contradicts (say, thinking_budget for openai).
Status validate_llm_config(const LlmConfig& config);

// The effective per-call timeout: the configured one, else the backend's default.
std::chrono::milliseconds effective_timeout(const LlmConfig& config);

}  // namespace cutegen
