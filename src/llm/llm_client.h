#pragma once
// What the rest of cutegen calls: a backend plus the bookkeeping around each call. Fills generation
// parameters from the config, holds the budgets before the call, prices it, appends its record to the
// usage log. Safe to use from several threads at once.
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/budget.h"
#include "llm/hooks.h"
#include "llm/llm_types.h"
#include "llm/price_table.h"
#include "llm/truncation_guard.h"
#include "llm/usage_log.h"

namespace cutegen {

// With a token or dollar budget every request states its max_tokens, so its worst case is known: the
// request's own (or the config's), else the backend's default, else this.
inline constexpr int kBudgetedDefaultMaxTokens = 32768;

// An upper bound on a prompt's tokens: the byte-level BPE tokenizers in use never make more than one
// token of a byte, plus the chat format's per-message overhead. Budgets rely on it never being low;
// typical text is ~4 characters a token, so it overstates the prompt about fourfold.
long long prompt_token_bound(const std::vector<Message>& messages);

struct LlmClientOptions {
  GenerationParams defaults;  // for whatever a request leaves unset
  BudgetLimits budget;        // for the whole client (a run)
  std::optional<std::filesystem::path> usage_log;
  // Cut out of every error this client returns or records: a last line of defence behind the backends'
  // own redaction.
  std::vector<std::string> secrets;
  // Where the client says, once per client (a run), that a server wrote more output tokens than the
  // request's max_tokens allowed: budgets are held on the assumption that it does not. Nothing when empty.
  ProgressFn warn;
};

struct CallOptions {
  Budget* task_budget = nullptr;  // a second, narrower budget (one task), checked with the client's
  std::string task;               // label for the usage record
  TruncationGuard* truncation = nullptr;  // this task's run of cut-off answers (truncation_guard.h)
};

struct LlmCall {
  LlmResponse response;
  CallRecord record;  // what was appended to the usage log: tokens, cost, latency, attempts
};

// The worst case of a request as it stands: its prompt bound plus its max_tokens (0 when none is
// stated, which makes the estimate a lower bound), priced from the table.
struct UsageEstimate {
  long long tokens = 0;
  double cost_usd = 0;
};

class LlmClient {
 public:
  static Result<std::unique_ptr<LlmClient>> create(std::unique_ptr<LlmBackend> backend, PriceTable prices,
                                                   LlmClientOptions options);

  // Before the call, claims its worst case from the run budget and `options.task_budget`, lowering the
  // request's max_tokens to what they can pay for; an Error of kind budget_exhausted means no call was
  // made (see is_budget_exhausted) because what is left cannot pay for a useful answer. An Error of
  // kind truncated_repeatedly means `options.truncation` saw too many cut-off answers in a row. Check
  // response.finish: `length` means the answer was cut off.
  Result<LlmCall> complete(LlmRequest request, const CallOptions& options = {});

  UsageEstimate estimate(const LlmRequest& request) const;
  // Would complete() refuse this request for its budgets now? Claims nothing.
  Status check_budget(const LlmRequest& request, const CallOptions& options = {}) const;

  // A resumed run took this request's answer from its log (LlmBackend::answered_from_log).
  void answered_from_log(const LlmRequest& request) { backend_->answered_from_log(request); }

  Budget& budget() { return budget_; }
  const Budget& budget() const { return budget_; }
  const LlmBackend& backend() const { return *backend_; }

 private:
  LlmClient(std::unique_ptr<LlmBackend> backend, PriceTable prices, LlmClientOptions options,
            std::unique_ptr<UsageLog> log);
  // The request's worst-case shape for the budgets (max_output: what it will ask for before any cap).
  Result<CallShape> shape_of(const LlmRequest& request, const CallOptions& options) const;

  std::unique_ptr<LlmBackend> backend_;
  const PriceTable prices_;
  const GenerationParams defaults_;
  const std::vector<std::string> secrets_;
  Budget budget_;
  std::unique_ptr<UsageLog> log_;
  const ProgressFn warn_;
  std::atomic<bool> warned_over_max_tokens_{false};
};

}  // namespace cutegen
