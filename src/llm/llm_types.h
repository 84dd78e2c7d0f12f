#pragma once
// The LLM boundary: messages in, an answer with its usage out. Every backend (the HTTP APIs, a user's
// command, cassettes, a person answering files) implements LlmBackend, so the agent loop never knows
// which one it talks to and its tests run on cassettes.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_text.h"  // dump_json: prompts quote logs that need not be UTF-8

#include "common/result.h"

namespace cutegen {

enum class Role { system, user, assistant };
std::string to_string(Role role);
Result<Role> parse_role(const std::string& text);

struct Message {
  Role role = Role::user;
  std::string text;
  // The conversation up to the end of this message is the same in every call of a run (the loop's
  // system message): a backend with explicit prompt caching marks it as a cache breakpoint (Anthropic's
  // cache_control). Providers that cache on their own (OpenAI) need only that it comes first.
  bool cache_prefix = false;
};

// Unset fields are not sent at all, so each server applies its own default rather than one we guessed.
struct GenerationParams {
  std::optional<int> max_tokens;                // OpenAI max_completion_tokens, Anthropic max_tokens
  std::optional<double> temperature;
  std::optional<std::string> reasoning_effort;  // OpenAI reasoning models
  std::optional<int> thinking_budget;           // Anthropic extended thinking (budget_tokens)

  // This request's own values win; `defaults` (from the config) fills the gaps.
  GenerationParams merged_over(const GenerationParams& defaults) const;
};

struct LlmRequest {
  std::vector<Message> messages;
  GenerationParams params;
};

struct Usage {
  long long input_tokens = 0;         // every prompt token, cached ones included
  long long cached_input_tokens = 0;  // the part of input_tokens served from the provider's prompt cache
  long long cache_write_tokens = 0;   // the part written to the provider's cache (Anthropic bills it above input)
  long long output_tokens = 0;        // reasoning/thinking tokens included (they are billed as output)
  long long reasoning_tokens = 0;     // the part of output_tokens spent reasoning, where the API reports it
  bool reported = true;               // false when the server sent no usage at all (then all counts are 0)
  long long total() const { return input_tokens + output_tokens; }
};

enum class FinishReason {
  stop,    // the model finished its answer
  length,  // cut off at the token limit: the text is incomplete
  other,   // content filter, refusal, tool call, ...: see finish_detail
};
std::string to_string(FinishReason reason);
Result<FinishReason> parse_finish_reason(const std::string& text);

struct LlmResponse {
  std::string text;
  Usage usage;
  FinishReason finish = FinishReason::stop;
  std::string finish_detail;  // the provider's own word ("end_turn", "content_filter"), for messages and logs
  std::string model;          // as the server reported it (often more specific than the one requested)
  double latency_s = 0;       // wall time of the call, retries included
  int attempts = 1;           // HTTP attempts, retries included
  bool replayed = false;      // answered from a cassette: nothing was spent
  // Set by RecordingBackend when this answer's cassette entry could not be written. The answer was
  // still paid for, so the client logs and charges it before failing with this message. Not serialised.
  std::string recording_error;

  bool truncated() const { return finish == FinishReason::length; }
};

class LlmBackend {
 public:
  virtual ~LlmBackend() = default;
  virtual std::string kind() const = 0;   // "openai", "anthropic", "exec", "replay", "manual"
  virtual std::string model() const = 0;  // as configured; part of the request hash
  // Whether a call is paid for at the price table's rates. Replayed answers cost nothing; exec and
  // manual report no usage, so nothing about them can be priced.
  virtual bool costs_money() const { return true; }
  // The output limit the backend sends when a request states none (the Anthropic API requires one);
  // empty: none is sent and the server's own applies.
  virtual std::optional<int> default_max_tokens() const { return std::nullopt; }
  // Safe to call from several threads at once. An Error means there is no answer; a truncated answer
  // is a response with finish == length, never an Error and never passed off as complete.
  virtual Result<LlmResponse> complete(const LlmRequest& request) = 0;
  // A resumed run answered `request` from its own log instead of calling complete(). A backend that
  // answers by position (a match-in-order cassette) moves past that answer; the others ignore it.
  virtual void answered_from_log(const LlmRequest& request) { (void)request; }
};

nlohmann::json to_json(const std::vector<Message>& messages);
Result<std::vector<Message>> messages_from_json(const nlohmann::json& j);
nlohmann::json to_json(const GenerationParams& params);
Result<GenerationParams> params_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Usage& usage);
Result<Usage> usage_from_json(const nlohmann::json& j);
nlohmann::json to_json(const LlmResponse& response);
Result<LlmResponse> response_from_json(const nlohmann::json& j);


// The conversation as plain text with each message's role marked, for a command's stdin or a person.
std::string render_as_text(const std::vector<Message>& messages);

// The first line of the first user message (shortened): how error messages name a request.
std::string first_user_line(const std::vector<Message>& messages);

}  // namespace cutegen
