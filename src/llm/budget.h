#pragma once
// Spending limits, held before each call rather than noticed after it. A call first claims its worst
// case (its prompt's token bound plus the output tokens it may ask for) against every budget, so
// calls in flight can never pass a limit together; the claim also says how many output tokens the
// call may ask for, which the client writes into the request's max_tokens. When what is left cannot
// pay for a useful answer the claim is refused with an Error of kind budget_exhausted, which the
// agent loop recognises (is_budget_exhausted) to stop a task cleanly.
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cutegen {

inline constexpr const char* kBudgetExhausted = "budget exhausted";
bool is_budget_exhausted(const Error& error);

// Below this many output tokens an answer cannot hold a kernel or an edit: a call that could only be
// granted fewer is refused instead of paid for.
inline constexpr long long kMinUsefulOutputTokens = 1024;

struct BudgetLimits {
  std::optional<long long> max_tokens;  // input + output tokens
  std::optional<double> max_cost_usd;
  std::optional<long long> max_calls;

  // Whether a call's size matters (a token or dollar limit), not only the number of calls.
  bool limits_spending() const { return max_tokens.has_value() || max_cost_usd.has_value(); }
};

// Parses {"max_tokens": N, "max_cost_usd": X, "max_calls": N}; unknown keys are errors.
Result<BudgetLimits> budget_limits_from_json(const nlohmann::json& j, const std::string& where);

struct BudgetSpent {
  long long calls = 0;  // started, in flight included
  long long tokens = 0;
  double cost_usd = 0;
  long long reserved_tokens = 0;  // worst case of the calls in flight
  double reserved_usd = 0;
  long long in_flight = 0;  // claims neither settled nor given back
};

// What one call may cost before its output length is settled.
struct CallShape {
  long long prompt_tokens = 0;        // an upper bound on the prompt's tokens
  double usd_per_input_token = 0;     // 0 for calls that cost nothing (replay, exec, manual)
  double usd_per_output_token = 0;
  std::optional<long long> max_output;  // the most output tokens the request asks for; empty: unbounded
  long long min_output = kMinUsefulOutputTokens;  // fewer cannot give a useful answer
};

class Budget;

// One call's hold on a budget: its place among max_calls and its worst case reserved. Move-only.
// settle() turns the reservation into what the call really spent; a claim destroyed unsettled gives
// everything back (the call never went out, say because another budget refused it).
class BudgetClaim {
 public:
  BudgetClaim() = default;
  BudgetClaim(BudgetClaim&& other) noexcept;
  BudgetClaim& operator=(BudgetClaim&& other) noexcept;
  BudgetClaim(const BudgetClaim&) = delete;
  BudgetClaim& operator=(const BudgetClaim&) = delete;
  ~BudgetClaim();

  // The most output tokens this budget lets the call ask for; empty when no token or dollar limit
  // applies (and the request stated no maximum).
  std::optional<long long> max_output() const { return max_output_; }
  // Lowers the reservation to a smaller max_output (another budget granted less).
  void narrow(long long max_output);
  void settle(long long tokens, double cost_usd);

 private:
  friend class Budget;
  BudgetClaim(Budget* budget, long long tokens, double usd, std::optional<long long> max_output, const CallShape& shape)
      : budget_(budget), tokens_(tokens), usd_(usd), max_output_(max_output), shape_(shape) {}
  void release();
  Budget* budget_ = nullptr;
  long long tokens_ = 0;  // reserved
  double usd_ = 0;
  std::optional<long long> max_output_;
  CallShape shape_;
};

// Thread-safe.
class Budget {
 public:
  explicit Budget(BudgetLimits limits = {}, std::string name = "run");
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // Claims one call of `shape`: counts it against max_calls and reserves prompt + the output it may
  // ask for, which is the request's own maximum lowered to what the remaining tokens and dollars can
  // pay for. An Error (kind budget_exhausted) names the limit and what was spent when a limit is
  // reached or the remainder cannot pay for shape.min_output tokens (or the whole request, if smaller).
  Result<BudgetClaim> claim(const CallShape& shape);
  // Would claim(shape) succeed now? Claims nothing.
  Status check(const CallShape& shape) const;

  // For answers served from a run's own log (resume): counts one call that spent this much, or says
  // which limit the original run had reached at this point.
  Status replay_call(long long tokens, double cost_usd);

  BudgetSpent spent() const;
  const BudgetLimits& limits() const { return limits_; }
  const std::string& name() const { return name_; }

 private:
  friend class BudgetClaim;
  // The output tokens a call of `shape` may ask for, or why it may not start. Caller holds mu_.
  Result<std::optional<long long>> grant_locked(const CallShape& shape) const;
  Error exhausted_locked(const std::string& why) const;
  void unreserve(long long tokens, double usd, bool uncount_call);
  // A claim ends (settled or given back): with none left in flight nothing is reserved, exactly —
  // subtracting floating-point dollars one call at a time would leave a residue behind.
  void end_claim_locked();
  BudgetLimits limits_;
  std::string name_;
  mutable std::mutex mu_;
  BudgetSpent spent_;
};

}  // namespace cutegen
