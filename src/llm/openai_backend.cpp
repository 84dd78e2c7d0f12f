#include "llm/openai_backend.h"

#include <fmt/format.h>

#include "llm/api_errors.h"

namespace cutegen {
using nlohmann::json;

OpenAiBackend::OpenAiBackend(HttpTransport& transport, HttpBackendOptions options, std::string max_tokens_param)
    : transport_(transport), options_(std::move(options)), max_tokens_param_(std::move(max_tokens_param)) {}

json OpenAiBackend::request_body(const LlmRequest& request) const {
  json messages = json::array();
  for (const auto& m : request.messages) messages.push_back({{"role", to_string(m.role)}, {"content", m.text}});
  json body = {{"model", options_.model}, {"messages", messages}};
  const auto& p = request.params;
  if (p.max_tokens) body[max_tokens_param_] = *p.max_tokens;
  if (p.reasoning_effort) body["reasoning_effort"] = *p.reasoning_effort;
  if (p.temperature) body["temperature"] = *p.temperature;
  return body;
}

Result<LlmResponse> OpenAiBackend::parse_response(const std::string& body, const std::string& requested_model) {
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return unexpected_response("openai", "not JSON", body);
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty())
    return unexpected_response("openai", "no choices", body);
  const auto& choice = j["choices"][0];
  if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object())
    return unexpected_response("openai", "choices[0] has no message", body);
  const auto& message = choice["message"];
  LlmResponse r;
  bool refused = false;
  if (message.contains("content") && message["content"].is_string()) {
    r.text = message["content"].get<std::string>();
  } else if (message.contains("content") && !message["content"].is_null()) {
    return unexpected_response("openai", "message.content is neither text nor null", body);
  } else if (message.contains("refusal") && message["refusal"].is_string()) {
    // A refusal is an answer that was paid for, not a failed call: its text is what the model said,
    // and its usage must reach the budget and the usage log.
    r.text = message["refusal"].get<std::string>();
    refused = true;
  }
  // No content at all happens legitimately when a reasoning model spends the whole limit thinking;
  // finish_reason then says "length" and the caller sees an empty, truncated answer.
  std::string finish = choice.contains("finish_reason") && choice["finish_reason"].is_string()
                           ? choice["finish_reason"].get<std::string>()
                           : "";
  r.finish_detail = refused ? "refusal" : finish.empty() ? "none" : finish;
  r.finish = refused            ? FinishReason::other
             : finish == "stop"   ? FinishReason::stop
             : finish == "length" ? FinishReason::length
                                  : FinishReason::other;
  r.model = j.contains("model") && j["model"].is_string() && !j["model"].get<std::string>().empty()
                ? j["model"].get<std::string>()
                : requested_model;
  if (j.contains("usage") && j["usage"].is_object()) {
    const auto& u = j["usage"];
    const json none = json::object();
    auto input = usage_count(u, "prompt_tokens");
    auto output = usage_count(u, "completion_tokens");
    auto cached = usage_count(u.contains("prompt_tokens_details") ? u["prompt_tokens_details"] : none, "cached_tokens");
    auto reasoning =
        usage_count(u.contains("completion_tokens_details") ? u["completion_tokens_details"] : none, "reasoning_tokens");
    for (const auto* count : {&input, &output, &cached, &reasoning})
      if (!*count) return unexpected_response("openai", count->error().message, body);
    r.usage.input_tokens = *input;
    r.usage.output_tokens = *output;
    r.usage.cached_input_tokens = *cached;
    r.usage.reasoning_tokens = *reasoning;
  } else {
    r.usage.reported = false;
  }
  return r;
}

Result<LlmResponse> OpenAiBackend::complete(const LlmRequest& request) {
  if (request.params.thinking_budget)
    return Error{"openai: thinking_budget applies to the anthropic backend; use reasoning_effort for OpenAI models"};
  std::vector<std::pair<std::string, std::string>> headers;
  if (!options_.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + options_.api_key);
  std::string url = join_url(options_.base_url, "/chat/completions");
  auto call = post_api(transport_, options_, "openai", url, std::move(headers), dump_json(request_body(request)));
  if (!call) return call.error();
  auto response = parse_response(call->response.body, options_.model);
  if (!response) return Error{redact(response.error().message, options_.api_key)};
  response->attempts = call->attempts;
  return response;
}

}  // namespace cutegen
