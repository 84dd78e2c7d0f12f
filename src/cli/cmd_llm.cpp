#include <iostream>
#include <iterator>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/process.h"
#include "llm/backend_factory.h"
#include "llm/curl_transport.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace {

struct LlmArgs {
  std::string prompt;
  std::string spec;
  std::string system;
  std::string record;
  std::string prices;
  std::string usage_log;
  int max_tokens = 0;
};

std::string usage_line(const LlmCall& call) {
  const auto& r = call.response;
  const auto& u = r.usage;
  std::string tokens = u.reported ? fmt::format("tokens in {} (cached {}) / out {} (reasoning {})", u.input_tokens,
                                                u.cached_input_tokens, u.output_tokens, u.reasoning_tokens)
                                  : "tokens not reported";
  std::string cost = r.replayed ? "$0 (replayed)"
                     : call.record.cost.price_unknown ? "$? (price unknown)"
                                                      : fmt::format("${:.4f}", call.record.cost.usd);
  return fmt::format("{} {}: {}, {}, {:.1f} s, finish {}{}", call.record.backend, r.model, tokens, cost, r.latency_s,
                     to_string(r.finish), r.finish_detail.empty() ? "" : " (" + r.finish_detail + ")");
}

int run_llm(const GlobalOptions& global, const LlmArgs& args) {
  auto file = load_config(global);
  if (!file) return fail(file.error().message);
  auto merged = merge_llm_config(file->llm, {.spec = args.spec, .record = args.record, .prices = args.prices});
  if (!merged) return fail(merged.error().message);
  const LlmConfig& config = *merged;

  std::string prompt = args.prompt;
  if (prompt == "-") prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (prompt.empty()) return fail("the prompt is empty");

  CurlTransport http;
  PosixProcessRunner runner;
  BackendDeps deps{http, runner, real_sleep, [](const std::string& line) { print_safe(stderr, "{}\n", line); }};
  std::optional<std::filesystem::path> log;
  if (!args.usage_log.empty()) log = args.usage_log;
  auto client = make_llm_client(config, deps, log);
  if (!client) return fail(client.error().message);

  LlmRequest request;
  if (!args.system.empty()) request.messages.push_back({Role::system, args.system});
  request.messages.push_back({Role::user, prompt});
  if (args.max_tokens > 0) request.params.max_tokens = args.max_tokens;

  auto call = (*client)->complete(request);
  if (!call) return fail(call.error().message);
  const auto& text = call->response.text;
  // On a terminal the answer's control characters are shown, not obeyed (an answer is the server's
  // bytes); into a pipe or a file it goes as it came.
  fmt::print("{}{}", isatty(STDOUT_FILENO) ? terminal_safe(text, LineBreaks::keep) : text,
             !text.empty() && text.back() == '\n' ? "" : "\n");
  std::fflush(stdout);
  print_safe(stderr, "{}\n", usage_line(*call));
  // An incomplete answer must not look like a complete one to a script checking the exit status.
  if (call->response.finish == FinishReason::length)
    return fail("the answer was cut off at the token limit (finish length); raise --max-tokens");
  if (call->response.finish == FinishReason::other)
    return fail(fmt::format("the model stopped without finishing ({})", call->response.finish_detail));
  return 0;
}

}  // namespace

void add_llm_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto args = std::make_shared<LlmArgs>();
  auto* cmd = app.add_subcommand("llm", "Send one prompt to the configured LLM backend (a quick check of keys, "
                                        "endpoints and prices)");
  cmd->add_option("prompt", args->prompt, "the prompt; - reads it from stdin")->required();
  cmd->add_option("--llm", args->spec,
                  "backend: openai:MODEL, anthropic:MODEL, exec:'COMMAND', replay:DIR or manual:DIR "
                  "(default: config llm section)");
  cmd->add_option("--system", args->system, "system prompt");
  cmd->add_option("--record", args->record, "also record the exchange as a cassette in DIR (for replay:DIR)");
  cmd->add_option("--max-tokens", args->max_tokens, "limit on output tokens (reasoning included)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--prices", args->prices, "price table JSON (default: config llm.prices, else config/prices.json)");
  cmd->add_option("--usage-log", args->usage_log, "append the call's usage record (JSON line) to this file");
  cmd->callback([&global, &exit_code, args] { exit_code = run_llm(global, *args); });
}

}  // namespace cutegen::cli
