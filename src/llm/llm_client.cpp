#include "llm/llm_client.h"

#include <chrono>

#include <fmt/format.h>

#include "llm/api_errors.h"
#include "llm/request_key.h"

namespace cutegen {

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
      log_(std::move(log)) {}

Result<LlmCall> LlmClient::complete(LlmRequest request, const CallOptions& options) {
  request.params = request.params.merged_over(defaults_);
  if (auto r = budget_.reserve(); !r) return r.error();
  if (options.task_budget) {
    if (auto r = options.task_budget->reserve(); !r) {
      budget_.release();
      return r.error();
    }
  }

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
  } else {
    record.error = answer.error().message;
    record.usage.reported = false;
  }
  budget_.charge(record.usage.total(), record.cost.usd);
  if (options.task_budget) options.task_budget->charge(record.usage.total(), record.cost.usd);

  if (log_) {
    if (auto logged = log_->append(record); !logged)
      return Error{fmt::format("{} (the call itself {})", logged.error().message,
                               answer ? "was answered" : "failed: " + answer.error().message)};
  }
  if (!answer) return answer.error();
  return LlmCall{std::move(*answer), std::move(record)};
}

UsageEstimate LlmClient::estimate(const LlmRequest& request) const {
  // ~4 characters a token holds for English and code with the common tokenizers; this guards budgets,
  // it does not bill anyone.
  std::size_t chars = 0;
  for (const auto& m : request.messages) chars += m.text.size() + 4;
  Usage usage;
  usage.input_tokens = static_cast<long long>((chars + 3) / 4);
  usage.output_tokens = request.params.merged_over(defaults_).max_tokens.value_or(0);
  return {usage.total(), prices_.cost(usage, backend_->model(), backend_->model()).usd};
}

Status LlmClient::check_budget(const LlmRequest& request, const CallOptions& options) const {
  auto next = estimate(request);
  if (auto ok = budget_.check(next.tokens, next.cost_usd); !ok) return ok;
  if (options.task_budget) return options.task_budget->check(next.tokens, next.cost_usd);
  return ok_status();
}

}  // namespace cutegen
