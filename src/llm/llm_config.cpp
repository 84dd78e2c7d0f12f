#include "llm/llm_config.h"

#include <cmath>

#include <fmt/format.h>

namespace cutegen {
using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr const char* kSpecHelp =
    "expected openai:MODEL, anthropic:MODEL, exec:'COMMAND', replay:DIR or manual:DIR";

Result<milliseconds> seconds_field(const json& v, const std::string& key, bool allow_zero = false) {
  if (!v.is_number() || v.get<double>() < 0 || (!allow_zero && v.get<double>() == 0))
    return Error{fmt::format("config: llm.{} must be a {} number of seconds", key, allow_zero ? "non-negative" : "positive")};
  return milliseconds(static_cast<long long>(std::llround(v.get<double>() * 1000)));
}

Result<std::string> string_field(const json& v, const std::string& key) {
  if (!v.is_string() || v.get<std::string>().empty())
    return Error{fmt::format("config: llm.{} must be a non-empty string", key)};
  return v.get<std::string>();
}

Result<int> positive_int_field(const json& v, const std::string& key) {
  if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > 1'000'000'000)
    return Error{fmt::format("config: llm.{} must be a positive integer", key)};
  return v.get<int>();
}

}  // namespace

Status apply_llm_spec(LlmConfig& config, const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) return Error{fmt::format("--llm {}: no backend given; {}", spec, kSpecHelp)};
  std::string kind = spec.substr(0, colon);
  std::string rest = spec.substr(colon + 1);
  if (kind != "openai" && kind != "anthropic" && kind != "exec" && kind != "replay" && kind != "manual")
    return Error{fmt::format("--llm {}: unknown backend '{}'; {}", spec, kind, kSpecHelp)};
  if (rest.empty()) {
    const char* what = kind == "exec" ? "COMMAND" : (kind == "replay" || kind == "manual") ? "DIR" : "MODEL";
    return Error{fmt::format("--llm {}: {} is missing; write {}:{}", spec, what, kind, what)};
  }
  config.backend = kind;
  config.model.clear();
  config.command.clear();
  config.dir.clear();
  if (kind == "openai" || kind == "anthropic") config.model = rest;
  if (kind == "exec") config.command = rest;
  if (kind == "replay" || kind == "manual") config.dir = rest;
  return ok_status();
}

bool llm_key_needs_trust(const std::string& key) {
  return key == "command" || key == "base_url" || key == "api_key_env" || key == "prices" || key == "record";
}

Result<LlmConfig> apply_llm_config(LlmConfig c, const json& j) {
  if (!j.is_object()) return Error{"config: \"llm\" must be an object"};
  for (const auto& [key, v] : j.items()) {
    if (key == "backend") {
      auto s = string_field(v, key);
      if (!s) return s.error();
      if (*s != "openai" && *s != "anthropic" && *s != "exec" && *s != "replay" && *s != "manual")
        return Error{fmt::format("config: llm.backend '{}' is unknown (expected openai, anthropic, exec, replay or manual)", *s)};
      c.backend = *s;
    } else if (key == "model" || key == "command" || key == "dir" || key == "base_url" || key == "api_key_env" ||
               key == "reasoning_effort" || key == "max_tokens_param" || key == "record" || key == "prices") {
      auto s = string_field(v, key);
      if (!s) return s.error();
      if (key == "model") c.model = *s;
      if (key == "command") c.command = *s;
      if (key == "dir") c.dir = *s;
      if (key == "base_url") c.base_url = *s;
      if (key == "api_key_env") c.api_key_env = *s;
      if (key == "reasoning_effort") c.params.reasoning_effort = *s;
      if (key == "max_tokens_param") c.max_tokens_param = *s;
      if (key == "record") c.record_dir = *s;
      if (key == "prices") c.prices = *s;
    } else if (key == "max_tokens" || key == "thinking_budget" || key == "max_attempts") {
      auto n = positive_int_field(v, key);
      if (!n) return n.error();
      if (key == "max_tokens") c.params.max_tokens = *n;
      if (key == "thinking_budget") c.params.thinking_budget = *n;
      if (key == "max_attempts") c.retry.max_attempts = *n;
    } else if (key == "temperature") {
      if (!v.is_number() || v.get<double>() < 0) return Error{"config: llm.temperature must be a non-negative number"};
      c.params.temperature = v.get<double>();
    } else if (key == "timeout_s" || key == "connect_timeout_s" || key == "poll_interval_s" ||
               key == "call_deadline_s") {
      auto d = seconds_field(v, key);
      if (!d) return d.error();
      if (key == "timeout_s") c.timeout = *d;
      if (key == "call_deadline_s") c.retry.deadline = *d;
      if (key == "connect_timeout_s") c.connect_timeout = *d;
      if (key == "poll_interval_s") c.poll_interval = *d;
    } else if (key == "backoff_initial_s" || key == "backoff_max_s" || key == "retry_after_max_s") {
      auto d = seconds_field(v, key, true);
      if (!d) return d.error();
      if (key == "backoff_initial_s") c.retry.initial_backoff = *d;
      if (key == "backoff_max_s") c.retry.max_backoff = *d;
      if (key == "retry_after_max_s") c.retry.max_retry_after = *d;
    } else if (key == "budget" || key == "task_budget") {
      auto limits = budget_limits_from_json(v, "llm." + key);
      if (!limits) return limits.error();
      (key == "budget" ? c.budget : c.task_budget) = *limits;
    } else {
      return Error{fmt::format(
          "config: unknown key llm.{} (known: backend, model, command, dir, base_url, api_key_env, max_tokens, "
          "temperature, reasoning_effort, thinking_budget, max_tokens_param, timeout_s, call_deadline_s, "
          "connect_timeout_s, max_attempts, backoff_initial_s, backoff_max_s, retry_after_max_s, poll_interval_s, record, prices, budget, "
          "task_budget)",
          key)};
    }
  }
  return c;
}

Status validate_llm_config(const LlmConfig& c) {
  if (c.backend.empty())
    return Error{"no LLM backend configured: pass --llm (e.g. --llm openai:gpt-5) or set llm.backend in the config"};
  bool http = c.backend == "openai" || c.backend == "anthropic";
  if (http && c.model.empty())
    return Error{fmt::format("the {} backend needs a model: --llm {}:MODEL or llm.model", c.backend, c.backend)};
  if (c.backend == "exec" && c.command.empty())
    return Error{"the exec backend needs a command: --llm exec:'COMMAND' or llm.command"};
  if ((c.backend == "replay" || c.backend == "manual") && c.dir.empty())
    return Error{fmt::format("the {} backend needs a directory: --llm {}:DIR or llm.dir", c.backend, c.backend)};
  if (!c.base_url.empty() && c.base_url.rfind("http://", 0) != 0 && c.base_url.rfind("https://", 0) != 0)
    return Error{fmt::format("llm.base_url '{}' must start with http:// or https://", c.base_url)};
  if (c.backend == "openai" && c.params.thinking_budget)
    return Error{"llm.thinking_budget applies to the anthropic backend; use reasoning_effort for openai"};
  if (c.backend == "anthropic" && c.params.reasoning_effort)
    return Error{"llm.reasoning_effort applies to the openai backend; use thinking_budget for anthropic"};
  if (c.max_tokens_param != "max_completion_tokens" && c.max_tokens_param != "max_tokens")
    return Error{fmt::format("llm.max_tokens_param '{}' must be max_completion_tokens or max_tokens", c.max_tokens_param)};
  if (c.retry.initial_backoff > c.retry.max_backoff)
    return Error{"llm.backoff_initial_s must not exceed llm.backoff_max_s"};
  return ok_status();
}

milliseconds effective_timeout(const LlmConfig& c) {
  if (c.timeout) return *c.timeout;
  if (c.backend == "manual") return milliseconds(24LL * 3600 * 1000);  // a person may take a while
  // Long enough for a reasoning model to write a whole kernel; the call deadline bounds its retries.
  return milliseconds(300'000);
}

}  // namespace cutegen
