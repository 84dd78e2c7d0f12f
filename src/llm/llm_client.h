#pragma once
// What the rest of cutegen calls: a backend plus the bookkeeping around each call. Fills generation
// parameters from the config, enforces the budgets, prices the call, appends its record to the usage
// log. Safe to use from several threads at once.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/budget.h"
#include "llm/llm_types.h"
#include "llm/price_table.h"
#include "llm/usage_log.h"

namespace cutegen {

struct LlmClientOptions {
  GenerationParams defaults;  // for whatever a request leaves unset
  BudgetLimits budget;        // for the whole client (a run)
  std::optional<std::filesystem::path> usage_log;
  // Cut out of every error this client returns or records: a last line of defence behind the backends'
  // own redaction.
  std::vector<std::string> secrets;
};

struct CallOptions {
  Budget* task_budget = nullptr;  // a second, narrower budget (one task), checked with the client's
  std::string task;               // label for the usage record
};

struct LlmCall {
  LlmResponse response;
  CallRecord record;  // what was appended to the usage log: tokens, cost, latency, attempts
};

// What a request will roughly spend: its prompt at ~4 characters a token plus its max_tokens (0 when no
// limit is set, which makes the estimate a lower bound), priced from the table.
struct UsageEstimate {
  long long tokens = 0;
  double cost_usd = 0;
};

class LlmClient {
 public:
  static Result<std::unique_ptr<LlmClient>> create(std::unique_ptr<LlmBackend> backend, PriceTable prices,
                                                   LlmClientOptions options);

  // An Error of kind budget_exhausted means no call was made (see is_budget_exhausted): a budget
  // limit is already reached. Check response.finish: `length` means the answer was cut off.
  Result<LlmCall> complete(LlmRequest request, const CallOptions& options = {});

  // Before a call: would it pass the run budget or `options.task_budget`? complete() stops only once a
  // limit is reached, so a loop that must not overshoot asks this first.
  UsageEstimate estimate(const LlmRequest& request) const;
  Status check_budget(const LlmRequest& request, const CallOptions& options = {}) const;

  Budget& budget() { return budget_; }
  const Budget& budget() const { return budget_; }
  const LlmBackend& backend() const { return *backend_; }

 private:
  LlmClient(std::unique_ptr<LlmBackend> backend, PriceTable prices, LlmClientOptions options,
            std::unique_ptr<UsageLog> log);

  std::unique_ptr<LlmBackend> backend_;
  const PriceTable prices_;
  const GenerationParams defaults_;
  const std::vector<std::string> secrets_;
  Budget budget_;
  std::unique_ptr<UsageLog> log_;
};

}  // namespace cutegen
