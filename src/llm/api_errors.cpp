#include "llm/api_errors.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

namespace cutegen {

std::string body_excerpt(std::string_view body, std::size_t limit) {
  std::string out(body.substr(0, limit));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (body.size() > limit) out += "...";
  if (out.empty()) out = "(empty body)";
  return out;
}

Error unexpected_response(std::string_view api, std::string_view what, std::string_view body) {
  return Error{fmt::format("{}: unexpected response ({}): {}", api, what, body_excerpt(body))};
}

long long usage_count(const nlohmann::json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number()) return 0;
  return usage[key].get<long long>();
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
