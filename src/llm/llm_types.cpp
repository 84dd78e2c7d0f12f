#include "llm/llm_types.h"

#include <fmt/format.h>

namespace cutegen {
using nlohmann::json;

namespace {

Result<long long> count_field(const json& j, const char* key, const char* where) {
  if (!j.contains(key)) return 0LL;
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<long long>() < 0)
    return Error{fmt::format("{}.{} must be a non-negative integer", where, key)};
  return v.get<long long>();
}

}  // namespace

std::string to_string(Role role) {
  switch (role) {
    case Role::system: return "system";
    case Role::user: return "user";
    case Role::assistant: return "assistant";
  }
  return "user";
}

Result<Role> parse_role(const std::string& text) {
  if (text == "system") return Role::system;
  if (text == "user") return Role::user;
  if (text == "assistant") return Role::assistant;
  return Error{fmt::format("unknown message role '{}' (expected system, user or assistant)", text)};
}

std::string to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::stop: return "stop";
    case FinishReason::length: return "length";
    case FinishReason::other: return "other";
  }
  return "other";
}

Result<FinishReason> parse_finish_reason(const std::string& text) {
  if (text == "stop") return FinishReason::stop;
  if (text == "length") return FinishReason::length;
  if (text == "other") return FinishReason::other;
  return Error{fmt::format("unknown finish reason '{}' (expected stop, length or other)", text)};
}

GenerationParams GenerationParams::merged_over(const GenerationParams& defaults) const {
  GenerationParams p = *this;
  if (!p.max_tokens) p.max_tokens = defaults.max_tokens;
  if (!p.temperature) p.temperature = defaults.temperature;
  if (!p.reasoning_effort) p.reasoning_effort = defaults.reasoning_effort;
  if (!p.thinking_budget) p.thinking_budget = defaults.thinking_budget;
  return p;
}

json to_json(const std::vector<Message>& messages) {
  json out = json::array();
  for (const auto& m : messages) {
    json j = {{"role", to_string(m.role)}, {"text", m.text}};
    // Only when set: a request without cache marks keeps the identity (and hash) it always had.
    if (m.cache_prefix) j["cache_prefix"] = true;
    out.push_back(std::move(j));
  }
  return out;
}

Result<std::vector<Message>> messages_from_json(const json& j) {
  if (!j.is_array()) return Error{"messages must be a list"};
  std::vector<Message> out;
  for (const auto& m : j) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("text") || !m["text"].is_string())
      return Error{"each message must be an object with string fields role and text"};
    auto role = parse_role(m["role"].get<std::string>());
    if (!role) return role.error();
    bool cache = false;
    if (m.contains("cache_prefix")) {
      if (!m["cache_prefix"].is_boolean()) return Error{"a message's cache_prefix must be true or false"};
      cache = m["cache_prefix"].get<bool>();
    }
    out.push_back({*role, m["text"].get<std::string>(), cache});
  }
  return out;
}

json to_json(const GenerationParams& p) {
  json j = json::object();
  if (p.max_tokens) j["max_tokens"] = *p.max_tokens;
  if (p.temperature) j["temperature"] = *p.temperature;
  if (p.reasoning_effort) j["reasoning_effort"] = *p.reasoning_effort;
  if (p.thinking_budget) j["thinking_budget"] = *p.thinking_budget;
  return j;
}

Result<GenerationParams> params_from_json(const json& j) {
  if (!j.is_object()) return Error{"params must be an object"};
  GenerationParams p;
  for (const auto& [key, v] : j.items()) {
    if (key == "max_tokens" || key == "thinking_budget") {
      if (!v.is_number_integer()) return Error{fmt::format("params.{} must be an integer", key)};
      (key == "max_tokens" ? p.max_tokens : p.thinking_budget) = v.get<int>();
    } else if (key == "temperature") {
      if (!v.is_number()) return Error{"params.temperature must be a number"};
      p.temperature = v.get<double>();
    } else if (key == "reasoning_effort") {
      if (!v.is_string()) return Error{"params.reasoning_effort must be a string"};
      p.reasoning_effort = v.get<std::string>();
    } else {
      return Error{fmt::format("unknown generation parameter '{}'", key)};
    }
  }
  return p;
}

json to_json(const Usage& u) {
  return {{"input_tokens", u.input_tokens},
          {"cached_input_tokens", u.cached_input_tokens},
          {"cache_write_tokens", u.cache_write_tokens},
          {"output_tokens", u.output_tokens},
          {"reasoning_tokens", u.reasoning_tokens},
          {"reported", u.reported}};
}

Result<Usage> usage_from_json(const json& j) {
  if (!j.is_object()) return Error{"usage must be an object"};
  Usage u;
  for (auto [key, dst] : {std::pair{"input_tokens", &u.input_tokens}, std::pair{"cached_input_tokens", &u.cached_input_tokens},
                          std::pair{"cache_write_tokens", &u.cache_write_tokens},
                          std::pair{"output_tokens", &u.output_tokens}, std::pair{"reasoning_tokens", &u.reasoning_tokens}}) {
    auto n = count_field(j, key, "usage");
    if (!n) return n.error();
    *dst = *n;
  }
  if (j.contains("reported")) {
    if (!j["reported"].is_boolean()) return Error{"usage.reported must be true or false"};
    u.reported = j["reported"].get<bool>();
  }
  return u;
}

json to_json(const LlmResponse& r) {
  return {{"text", r.text},
          {"usage", to_json(r.usage)},
          {"finish", to_string(r.finish)},
          {"finish_detail", r.finish_detail},
          {"model", r.model},
          {"latency_s", r.latency_s},
          {"attempts", r.attempts}};
}

Result<LlmResponse> response_from_json(const json& j) {
  if (!j.is_object()) return Error{"response must be an object"};
  for (const char* key : {"text", "finish", "model"})
    if (!j.contains(key) || !j[key].is_string()) return Error{fmt::format("response.{} must be a string", key)};
  LlmResponse r;
  r.text = j["text"].get<std::string>();
  r.model = j["model"].get<std::string>();
  auto finish = parse_finish_reason(j["finish"].get<std::string>());
  if (!finish) return finish.error();
  r.finish = *finish;
  if (j.contains("finish_detail") && j["finish_detail"].is_string()) r.finish_detail = j["finish_detail"].get<std::string>();
  if (!j.contains("usage")) return Error{"response.usage is missing"};
  auto usage = usage_from_json(j["usage"]);
  if (!usage) return usage.error();
  r.usage = *usage;
  if (j.contains("latency_s") && j["latency_s"].is_number()) r.latency_s = j["latency_s"].get<double>();
  if (j.contains("attempts") && j["attempts"].is_number_integer()) r.attempts = j["attempts"].get<int>();
  return r;
}


std::string render_as_text(const std::vector<Message>& messages) {
  // Markers a prompt is unlikely to contain itself (unlike markdown headings, which CuTe guides are full of).
  std::string out;
  for (const auto& m : messages) {
    if (!out.empty()) out += "\n";
    out += fmt::format("=== {} ===\n{}", to_string(m.role), m.text);
    if (out.empty() || out.back() != '\n') out += "\n";
  }
  return out;
}

std::string first_user_line(const std::vector<Message>& messages) {
  for (const auto& m : messages) {
    if (m.role != Role::user) continue;
    std::string line = m.text.substr(0, m.text.find('\n'));
    if (line.size() > 80) line = line.substr(0, 77) + "...";
    return line;
  }
  return "(no user message)";
}

}  // namespace cutegen
