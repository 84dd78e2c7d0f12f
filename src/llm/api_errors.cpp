#include "llm/api_errors.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cmath>

#include "common/json_text.h"
#include "common/terminal_text.h"

namespace cutegen {

std::string body_excerpt(std::string_view body, std::size_t limit) {
  std::string out(body.substr(0, limit));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  out = terminal_safe(out);
  if (body.size() > limit) out += "...";
  if (out.empty()) out = "(empty body)";
  return out;
}

Error unexpected_response(std::string_view api, std::string_view what, std::string_view body) {
  return Error{fmt::format("{}: unexpected response ({}): {}", api, what, body_excerpt(body))};
}

Result<long long> usage_count(const nlohmann::json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || usage[key].is_null()) return 0LL;
  const auto& v = usage[key];
  auto bad = [&] {
    return Error{fmt::format("usage.{} is {}, not a token count from 0 to {}", key, body_excerpt(dump_json(v), 40),
                             kMaxUsageCount)};
  };
  if (v.is_number_unsigned()) {
    if (v.get<unsigned long long>() > static_cast<unsigned long long>(kMaxUsageCount)) return bad();
    return static_cast<long long>(v.get<unsigned long long>());
  }
  if (v.is_number_integer()) {
    if (v.get<long long>() < 0 || v.get<long long>() > kMaxUsageCount) return bad();
    return v.get<long long>();
  }
  if (v.is_number_float()) {  // 12.0 is a count; 12.5, -1.0, 1e30 and NaN are not
    double d = v.get<double>();
    if (!(d >= 0 && d <= static_cast<double>(kMaxUsageCount)) || d != std::floor(d)) return bad();
    return static_cast<long long>(d);
  }
  return bad();
}

std::string api_error_text(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_string()) return body_excerpt(e.get<std::string>());
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return body_excerpt(e["message"].get<std::string>());
  }
  return body_excerpt(body);
}

Error http_status_error(const std::string& label, const std::string& url, const HttpResponse& response,
                        const KeyInfo& key) {
  std::string message =
      fmt::format("{}: HTTP {} from {}: {}", label, response.status, url, api_error_text(response.body));
  if (response.status == 401 || response.status == 403) {
    if (!key.set)
      message += fmt::format("; {} is not set: export it with your API key", key.env_var);
    else if (response.status == 401)
      message += fmt::format("; the key in {} was rejected: set {} to a valid API key", key.env_var, key.env_var);
    else
      message += fmt::format("; the key in {} lacks access: set {} to a key allowed to use this model", key.env_var,
                             key.env_var);
  }
  return Error{message};
}

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  static const std::string kMark = "[redacted]";
  for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos + kMark.size()))
    text.replace(pos, secret.size(), kMark);
  return text;
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets) text = redact(std::move(text), s);
  return text;
}

}  // namespace cutegen
