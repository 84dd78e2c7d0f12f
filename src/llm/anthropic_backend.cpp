#include "llm/anthropic_backend.h"

#include <fmt/format.h>

#include "llm/api_errors.h"

namespace cutegen {
using nlohmann::json;

AnthropicBackend::AnthropicBackend(HttpTransport& transport, HttpBackendOptions options)
    : transport_(transport), options_(std::move(options)) {}

Result<json> AnthropicBackend::request_body(const LlmRequest& request) const {
  const auto& p = request.params;
  if (p.reasoning_effort)
    return Error{"anthropic: reasoning_effort applies to the openai backend; use thinking_budget for Claude models"};
  int max_tokens = p.max_tokens.value_or(kAnthropicDefaultMaxTokens);
  if (p.thinking_budget) {
    if (*p.thinking_budget < kAnthropicMinThinkingBudget)
      return Error{fmt::format("anthropic: thinking_budget {} is below the API's minimum of {}", *p.thinking_budget,
                               kAnthropicMinThinkingBudget)};
    if (*p.thinking_budget >= max_tokens)
      return Error{fmt::format("anthropic: thinking_budget {} must be below max_tokens {}; raise max_tokens",
                               *p.thinking_budget, max_tokens)};
    // The API refuses any other temperature with thinking on; saying so here saves a round trip.
    if (p.temperature && *p.temperature != 1.0)
      return Error{fmt::format("anthropic: temperature {} cannot be combined with thinking_budget (the API allows only "
                               "1 with extended thinking); unset llm.temperature",
                               *p.temperature)};
  }
  // The Messages API takes the system prompt as a top-level field, not as a message. A message marked
  // as the end of the run's stable prefix becomes a text block with a cache breakpoint (cache_control),
  // so later calls read that prefix from the prompt cache; without marks the plain string forms are
  // sent, as before.
  auto text_block = [](const Message& m) {
    json block = {{"type", "text"}, {"text", m.text}};
    if (m.cache_prefix) block["cache_control"] = {{"type", "ephemeral"}};
    return block;
  };
  bool cache_marks = false;
  for (const auto& m : request.messages) cache_marks = cache_marks || m.cache_prefix;
  std::string system;
  json system_blocks = json::array();
  json messages = json::array();
  for (const auto& m : request.messages) {
    if (m.role == Role::system) {
      system += (system.empty() ? "" : "\n\n") + m.text;
      system_blocks.push_back(text_block(m));
    } else if (m.cache_prefix) {
      messages.push_back({{"role", to_string(m.role)}, {"content", json::array({text_block(m)})}});
    } else {
      messages.push_back({{"role", to_string(m.role)}, {"content", m.text}});
    }
  }
  json body = {{"model", options_.model}, {"max_tokens", max_tokens}, {"messages", messages}};
  if (!system.empty()) body["system"] = cache_marks ? system_blocks : json(system);
  if (p.temperature) body["temperature"] = *p.temperature;
  if (p.thinking_budget) body["thinking"] = {{"type", "enabled"}, {"budget_tokens", *p.thinking_budget}};
  return body;
}

Result<LlmResponse> AnthropicBackend::parse_response(const std::string& body, const std::string& requested_model) {
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return unexpected_response("anthropic", "not JSON", body);
  if (!j.is_object() || !j.contains("content") || !j["content"].is_array())
    return unexpected_response("anthropic", "no content list", body);
  LlmResponse r;
  // Thinking blocks are the model's scratch work, not the answer; only text blocks are.
  for (const auto& block : j["content"]) {
    if (!block.is_object() || !block.contains("type"))
      return unexpected_response("anthropic", "a content block has no type", body);
    if (block["type"] == "text") {
      if (!block.contains("text") || !block["text"].is_string())
        return unexpected_response("anthropic", "a text block has no text", body);
      r.text += block["text"].get<std::string>();
    }
  }
  std::string stop = j.contains("stop_reason") && j["stop_reason"].is_string() ? j["stop_reason"].get<std::string>() : "";
  r.finish_detail = stop.empty() ? "none" : stop;
  if (stop == "end_turn" || stop == "stop_sequence")
    r.finish = FinishReason::stop;
  else if (stop == "max_tokens" || stop == "model_context_window_exceeded")
    r.finish = FinishReason::length;
  else
    r.finish = FinishReason::other;
  r.model = j.contains("model") && j["model"].is_string() && !j["model"].get<std::string>().empty()
                ? j["model"].get<std::string>()
                : requested_model;
  if (j.contains("usage") && j["usage"].is_object()) {
    const auto& u = j["usage"];
    // Anthropic's input_tokens excludes cache reads and writes; ours counts every prompt token.
    auto cache_read = usage_count(u, "cache_read_input_tokens");
    auto cache_write = usage_count(u, "cache_creation_input_tokens");
    auto input = usage_count(u, "input_tokens");
    auto output = usage_count(u, "output_tokens");
    for (const auto* count : {&cache_read, &cache_write, &input, &output})
      if (!*count) return unexpected_response("anthropic", count->error().message, body);
    r.usage.input_tokens = *input + *cache_read + *cache_write;
    r.usage.cached_input_tokens = *cache_read;
    r.usage.cache_write_tokens = *cache_write;
    r.usage.output_tokens = *output;
  } else {
    r.usage.reported = false;
  }
  return r;
}

Result<LlmResponse> AnthropicBackend::complete(const LlmRequest& request) {
  auto body = request_body(request);
  if (!body) return body.error();
  std::vector<std::pair<std::string, std::string>> headers = {{"anthropic-version", kAnthropicVersion}};
  if (!options_.api_key.empty()) headers.emplace_back("x-api-key", options_.api_key);
  std::string url = join_url(options_.base_url, "/v1/messages");
  auto call = post_api(transport_, options_, "anthropic", url, std::move(headers), dump_json(*body));
  if (!call) return call.error();
  auto response = parse_response(call->response.body, options_.model);
  if (!response) return Error{redact(response.error().message, options_.api_key)};
  response->attempts = call->attempts;
  return response;
}

}  // namespace cutegen
