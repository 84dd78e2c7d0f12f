#include "llm/backend_factory.h"

#include <cstdlib>

#include <fmt/format.h>

#include "llm/anthropic_backend.h"
#include "llm/cassette.h"
#include "llm/exec_backend.h"
#include "llm/manual_backend.h"
#include "llm/openai_backend.h"

namespace cutegen {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

Result<HttpBackendOptions> http_options(const LlmConfig& c, const BackendDeps& deps) {
  bool openai = c.backend == "openai";
  const char* url_env = openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL";
  HttpBackendOptions o;
  o.model = c.model;
  o.base_url = c.base_url.empty() ? env_or(url_env, openai ? kOpenAiDefaultBaseUrl : kAnthropicDefaultBaseUrl) : c.base_url;
  if (o.base_url.rfind("http://", 0) != 0 && o.base_url.rfind("https://", 0) != 0)
    return Error{fmt::format("{}={} must start with http:// or https://", url_env, o.base_url)};
  o.key.env_var = c.api_key_env.empty() ? (openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY") : c.api_key_env;
  o.api_key = env_or(o.key.env_var.c_str(), "");
  o.key.set = !o.api_key.empty();
  o.connect_timeout = c.connect_timeout;
  o.timeout = effective_timeout(c);
  o.retry = c.retry;
  o.sleep = deps.sleep;
  o.progress = deps.progress;
  return o;
}

}  // namespace

std::vector<std::string> environment_secrets(const LlmConfig& c) {
  std::vector<std::string> out;
  for (const std::string& name : {std::string("OPENAI_API_KEY"), std::string("ANTHROPIC_API_KEY"), c.api_key_env}) {
    std::string value = name.empty() ? "" : env_or(name.c_str(), "");
    if (value.size() >= 8) out.push_back(value);
  }
  return out;
}

Result<std::unique_ptr<LlmBackend>> make_backend(const LlmConfig& c, const BackendDeps& deps) {
  if (auto valid = validate_llm_config(c); !valid) return valid.error();
  std::unique_ptr<LlmBackend> backend;
  if (c.backend == "openai" || c.backend == "anthropic") {
    auto options = http_options(c, deps);
    if (!options) return options.error();
    if (c.backend == "openai")
      backend = std::make_unique<OpenAiBackend>(deps.http, std::move(*options), c.max_tokens_param);
    else
      backend = std::make_unique<AnthropicBackend>(deps.http, std::move(*options));
  } else if (c.backend == "exec") {
    backend = std::make_unique<ExecBackend>(deps.runner,
                                            ExecOptions{c.command, c.model, effective_timeout(c), environment_secrets(c)});
  } else if (c.backend == "replay") {
    auto replay = ReplayBackend::open(c.dir);
    if (!replay) return replay.error();
    backend = std::move(*replay);
  } else {
    ManualOptions m;
    m.dir = c.dir;
    if (!c.model.empty()) m.model = c.model;
    m.poll_interval = c.poll_interval;
    m.timeout = effective_timeout(c);
    m.progress = deps.progress;
    backend = std::make_unique<ManualBackend>(std::move(m));
  }
  if (c.record_dir) backend = std::make_unique<RecordingBackend>(std::move(backend), *c.record_dir);
  return backend;
}

Result<std::unique_ptr<LlmClient>> make_llm_client(const LlmConfig& c, const BackendDeps& deps,
                                                   std::optional<std::filesystem::path> usage_log) {
  auto backend = make_backend(c, deps);
  if (!backend) return backend.error();
  auto prices = PriceTable::load(c.prices.value_or(PriceTable::default_path()));
  if (!prices) return prices.error();
  return LlmClient::create(std::move(*backend), std::move(*prices),
                           {c.params, c.budget, std::move(usage_log), environment_secrets(c), deps.progress});
}

}  // namespace cutegen
