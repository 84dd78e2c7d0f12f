#include "llm/llm_client.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include <fmt/format.h>

#include "llm/api_errors.h"
#include "llm/request_key.h"

namespace cutegen {

long long prompt_token_bound(const std::vector<Message>& messages) {
  // The chat formats spend a handful of tokens per message on roles and separators, and a few per
  // request on priming the reply; 16 and 32 are above what OpenAI and Anthropic document.
  long long tokens = 32;
  for (const auto& m : messages) tokens += static_cast<long long>(m.text.size()) + 16;
  return tokens;
}

Result<std::unique_ptr<LlmClient>> LlmClient::create(std::unique_ptr<LlmBackend> backend, PriceTable prices,
                                                     LlmClientOptions options) {
  std::unique_ptr<UsageLog> log;
  if (options.usage_log) {
    auto opened = UsageLog::open(*options.usage_log);
    if (!opened) return opened.error();
    log = std::move(*opened);
  }
  return std::unique_ptr<LlmClient>(new LlmClient(std::move(backend), std::move(prices), std::move(options), std::move(log)));
}

LlmClient::LlmClient(std::unique_ptr<LlmBackend> backend, PriceTable prices, LlmClientOptions options,
                     std::unique_ptr<UsageLog> log)
    : backend_(std::move(backend)),
      prices_(std::move(prices)),
      defaults_(options.defaults),
      secrets_(options.secrets),
      budget_(options.budget, "run"),
      log_(std::move(log)),
      warn_(options.warn) {}

Result<CallShape> LlmClient::shape_of(const LlmRequest& request, const CallOptions& options) const {
  CallShape s;
  s.prompt_tokens = prompt_token_bound(request.messages);
  const Budget* task = options.task_budget;
  bool limited = budget_.limits().limits_spending() || (task && task->limits().limits_spending());
  if (request.params.max_tokens) s.max_output = *request.params.max_tokens;
  else if (limited) s.max_output = backend_->default_max_tokens().value_or(kBudgetedDefaultMaxTokens);
  // Extended thinking spends its budget before the answer starts: a grant below it leaves no answer.
  if (request.params.thinking_budget) s.min_output = *request.params.thinking_budget + kMinUsefulOutputTokens;
  if (!backend_->costs_money()) return s;
  if (auto price = prices_.find(backend_->model())) {
    // The full input price: whether the provider's prompt cache will serve part of it is unknown.
    s.usd_per_input_token = price->second.input / 1e6;
    s.usd_per_output_token = price->second.output / 1e6;
    return s;
  }
  for (const Budget* b : {&budget_, task})
    if (b && b->limits().max_cost_usd)
      return Error{fmt::format("the {} budget of ${:.4f} cannot be held: the price table has no entry for model '{}'; "
                               "add its prices to config/prices.json (or the file llm.prices names)",
                               b->name(), *b->limits().max_cost_usd, backend_->model())};
  return s;
}

Result<LlmCall> LlmClient::complete(LlmRequest request, const CallOptions& options) {
  request.params = request.params.merged_over(defaults_);
  if (options.truncation)
    if (auto ok = options.truncation->check(); !ok) return ok.error();
  auto shape = shape_of(request, options);
  if (!shape) return shape.error();
  auto run_claim = budget_.claim(*shape);
  if (!run_claim) return run_claim.error();
  std::optional<long long> granted = run_claim->max_output();
  std::optional<BudgetClaim> task_claim;
  if (options.task_budget) {
    CallShape narrowed = *shape;
    narrowed.max_output = granted;
    auto claimed = options.task_budget->claim(narrowed);
    if (!claimed) return claimed.error();  // run_claim gives its call back as it goes out of scope
    granted = claimed->max_output();
    if (granted) run_claim->narrow(*granted);
    task_claim = std::move(*claimed);
  }
  const bool capped = granted && (!shape->max_output || *granted < *shape->max_output);
  if (granted) request.params.max_tokens = static_cast<int>(std::min<long long>(*granted, INT_MAX));

  auto start = std::chrono::steady_clock::now();
  auto answer = backend_->complete(request);
  if (!answer) answer = Error{redact(answer.error().message, secrets_)};
  double latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  CallRecord record;
  record.time = utc_timestamp_now();
  record.task = options.task;
  record.backend = backend_->kind();
  record.model = backend_->model();
  record.request_hash = request_hash(backend_->kind(), backend_->model(), request);
  record.latency_s = latency;
  record.max_tokens = request.params.max_tokens;
  record.capped_by_budget = capped;
  if (answer) {
    answer->latency_s = latency;
    const LlmResponse& r = *answer;
    if (!r.model.empty()) record.model = r.model;
    record.usage = r.usage;
    // A replayed answer cost nothing now; its usage still counts against token budgets so that a replayed
    // run stops where the recorded one would have.
    record.cost = r.replayed ? Cost{} : prices_.cost(r.usage, r.model, backend_->model());
    record.attempts = r.attempts;
    record.finish = r.finish;
    record.finish_detail = r.finish_detail;
    record.replayed = r.replayed;
    record.error = redact(r.recording_error, secrets_);
    if (options.truncation) options.truncation->observe(r, request.params.max_tokens, capped);
    // The budgets reserved max_tokens for this answer and now charge what the server reported, however
    // much more that is; the next claim is refused once a limit is passed. Said once: a server that
    // ignores the limit ignores it on every call.
    if (!r.replayed && request.params.max_tokens && r.usage.output_tokens > *request.params.max_tokens && warn_ &&
        !warned_over_max_tokens_.exchange(true))
      warn_(fmt::format("warning: {} model {} reported {} output tokens for a request limited to {} (max_tokens): "
                        "budgets charge what it reports and stop the run once a limit is passed, but a single call "
                        "can exceed what they would have allowed (said once per run)",
                        backend_->kind(), record.model, r.usage.output_tokens, *request.params.max_tokens));
  } else {
    record.error = answer.error().message;
    record.usage.reported = false;
  }
  run_claim->settle(record.usage.total(), record.cost.usd);
  if (task_claim) task_claim->settle(record.usage.total(), record.cost.usd);

  if (log_) {
    if (auto logged = log_->append(record); !logged)
      return Error{fmt::format("{} (the call itself {})", logged.error().message,
                               answer ? "was answered" : "failed: " + answer.error().message)};
  }
  if (!answer) return answer.error();
  if (!answer->recording_error.empty())
    return Error{fmt::format("{} (the answer was paid for: {} tokens, ${:.4f}{}; fix the cassette directory and "
                             "run again)",
                             record.error, record.usage.total(), record.cost.usd,
                             log_ ? ", logged in " + log_->path().string() : "")};
  return LlmCall{std::move(*answer), std::move(record)};
}

UsageEstimate LlmClient::estimate(const LlmRequest& request) const {
  Usage usage;
  usage.input_tokens = prompt_token_bound(request.messages);
  usage.output_tokens = request.params.merged_over(defaults_).max_tokens.value_or(0);
  double usd = backend_->costs_money() ? prices_.cost(usage, backend_->model(), backend_->model()).usd : 0;
  return {usage.total(), usd};
}

Status LlmClient::check_budget(const LlmRequest& request, const CallOptions& options) const {
  LlmRequest merged = request;
  merged.params = request.params.merged_over(defaults_);
  auto shape = shape_of(merged, options);
  if (!shape) return shape.error();
  if (auto ok = budget_.check(*shape); !ok) return ok;
  if (options.task_budget) return options.task_budget->check(*shape);
  return ok_status();
}

}  // namespace cutegen
