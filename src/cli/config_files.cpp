#include "cli/config_files.h"

#include <cstdlib>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string shown(const fs::path& p) { return p.is_absolute() ? p.string() : "./" + p.lexically_normal().string(); }

// The section parsers say "config: ..."; with several files the user needs to know which one.
Error in_file(const Error& e, const fs::path& path) {
  const std::string prefix = "config: ";
  std::string message = e.message.rfind(prefix, 0) == 0 ? e.message.substr(prefix.size()) : e.message;
  return Error{fmt::format("config {}: {}", shown(path), message), e.kind};
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

Status refuse_untrusted_keys(const json& j, const UsedConfigFile& file, const ConfigLocations& where) {
  for (const char* section : {"compile", "llm"}) {
    if (!j.contains(section) || !j[section].is_object()) continue;
    for (const auto& [key, v] : j[section].items()) {
      bool needs_trust = std::string(section) == "compile" ? compile_key_needs_trust(key) : llm_key_needs_trust(key);
      if (!needs_trust) continue;
      std::string user = where.user ? fmt::format(" or move it to {}", where.user->string()) : "";
      return Error{fmt::format("config {}: {}.{} is not accepted from a project's cutegen.json, which comes with the "
                               "checkout (it can run a program or send a key elsewhere); if you trust this file, pass "
                               "it with --config {}{}",
                               shown(file.path), section, key, shown(file.path), user)};
    }
  }
  return ok_status();
}

Status apply_file(LoadedConfig& out, const UsedConfigFile& file, const ConfigLocations& where) {
  auto text = read_file(file.path);
  if (!text) return Error{fmt::format("config: {}", text.error().message)};
  auto j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{fmt::format("config {}: not a JSON object", shown(file.path))};
  for (const auto& [key, v] : j.items())
    if (key != "compile" && key != "llm" && key != "cache" && key != "tune")
      return Error{fmt::format("config {}: unknown key '{}' (known: compile, llm, cache, tune)", shown(file.path), key)};
  if (file.source == ConfigSource::project)
    if (auto trusted = refuse_untrusted_keys(j, file, where); !trusted) return trusted;
  if (j.contains("compile")) {
    auto compile = apply_compile_config(out.compile, j["compile"]);
    if (!compile) return in_file(compile.error(), file.path);
    out.compile = *compile;
  }
  if (j.contains("llm")) {
    auto llm = apply_llm_config(out.llm, j["llm"]);
    if (!llm) return in_file(llm.error(), file.path);
    out.llm = *llm;
  }
  if (j.contains("cache")) {
    auto cache = apply_cache_config(out.cache, j["cache"]);
    if (!cache) return in_file(cache.error(), file.path);
    out.cache = *cache;
  }
  if (j.contains("tune")) {
    auto tune = apply_tune_config(out.tune, j["tune"]);
    if (!tune) return in_file(tune.error(), file.path);
    out.tune = *tune;
  }
  return ok_status();
}

}  // namespace

ConfigLocations config_locations(const std::string& config_option) {
  ConfigLocations where;
  if (!config_option.empty()) {
    where.named = config_option;
    where.named_by = "--config";
  } else if (const char* env = std::getenv("CUTEGEN_CONFIG"); env && *env) {
    where.named = env;
    where.named_by = "CUTEGEN_CONFIG";
  }
  // The XDG base directory spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) where.user = fs::path(xdg) / "cutegen" / "config.json";
  else if (home && *home) where.user = fs::path(home) / ".config" / "cutegen" / "config.json";
  return where;
}

std::string LoadedConfig::describe() const {
  if (files.empty()) return "";
  std::string out = "config: ";
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& f = files[i];
    const char* what = f.source == ConfigSource::named ? "named"
                       : f.source == ConfigSource::user ? "user"
                                                        : "project; settings that run programs or redirect API keys are refused";
    out += fmt::format("{}{} ({})", i ? ", " : "", shown(f.path), what);
  }
  return out;
}

Status check_named_config(const ConfigLocations& where) {
  std::error_code ec;
  if (!where.named.empty() && !fs::is_regular_file(where.named, ec))
    return Error{fmt::format("config: {} names {}, which is not a file", where.named_by, where.named.string())};
  return ok_status();
}

Result<LoadedConfig> load_config_files(const ConfigLocations& where) {
  std::vector<UsedConfigFile> found;  // highest precedence first
  std::error_code ec;
  if (!where.named.empty()) {
    if (auto named = check_named_config(where); !named) return named.error();
    found.push_back({where.named, ConfigSource::named});
  }
  auto already = [&found](const fs::path& p) {
    for (const auto& f : found)
      if (same_file(f.path, p)) return true;
    return false;
  };
  if (where.user && fs::exists(*where.user, ec) && !already(*where.user)) found.push_back({*where.user, ConfigSource::user});
  if (fs::exists(where.project, ec) && !already(where.project)) found.push_back({where.project, ConfigSource::project});

  LoadedConfig out;
  out.files = found;
  for (auto it = found.rbegin(); it != found.rend(); ++it)
    if (auto applied = apply_file(out, *it, where); !applied) return applied.error();
  return out;
}

Result<LlmConfig> merge_llm_config(LlmConfig config, const LlmOverrides& o) {
  if (!o.spec.empty())
    if (auto s = apply_llm_spec(config, o.spec); !s) return s.error();
  if (config.backend.empty())
    return Error{"no LLM backend: pass --llm (openai:MODEL, anthropic:MODEL, exec:'CMD', replay:DIR or manual:DIR) "
                 "or set llm.backend in the config"};
  if (!o.record.empty()) config.record_dir = o.record;
  if (!o.prices.empty()) config.prices = o.prices;
  if (o.max_cost > 0) config.budget.max_cost_usd = o.max_cost;
  if (o.max_tokens > 0) config.budget.max_tokens = o.max_tokens;
  if (o.max_calls > 0) config.budget.max_calls = o.max_calls;
  return config;
}

}  // namespace cutegen::cli
