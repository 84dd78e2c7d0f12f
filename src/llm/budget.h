#pragma once
// Spending limits. Once a limit is reached every further call fails with an Error of kind budget_exhausted, starting with
// "budget exhausted", which the agent loop recognises (is_budget_exhausted) to stop a task cleanly
// instead of treating it as a failure of the kernel.
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cutegen {

inline constexpr const char* kBudgetExhausted = "budget exhausted";
bool is_budget_exhausted(const Error& error);

struct BudgetLimits {
  std::optional<long long> max_tokens;  // input + output tokens
  std::optional<double> max_cost_usd;
  std::optional<long long> max_calls;
};

// Parses {"max_tokens": N, "max_cost_usd": X, "max_calls": N}; unknown keys are errors.
Result<BudgetLimits> budget_limits_from_json(const nlohmann::json& j, const std::string& where);

struct BudgetSpent {
  long long calls = 0;  // started, in flight included
  long long tokens = 0;
  double cost_usd = 0;
};

// Thread-safe. Calls are counted when they start, so max_calls holds exactly even with calls in flight;
// tokens and dollars are known only when a call ends, so the calls in flight when a token or dollar
// limit is crossed may overshoot it (by at most one call each).
class Budget {
 public:
  explicit Budget(BudgetLimits limits = {}, std::string name = "run");
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // Whether another call may start, without claiming it: an Error (kind budget_exhausted) saying
  // which limit is used up, or which one a call spending `next_tokens` and `next_cost_usd` would pass.
  // The loop asks this before building an expensive prompt; estimate_usage() gives the numbers.
  Status check(long long next_tokens = 0, double next_cost_usd = 0) const;
  // Claims one call, or says which limit is used up.
  Status reserve();
  // Gives back a claimed call that never went out (another budget refused it).
  void release();
  // What a finished call (answered or failed) spent.
  void charge(long long tokens, double cost_usd);

  BudgetSpent spent() const;
  const BudgetLimits& limits() const { return limits_; }
  const std::string& name() const { return name_; }

 private:
  Status check_locked(long long next_tokens, double next_cost_usd) const;
  BudgetLimits limits_;
  std::string name_;
  mutable std::mutex mu_;
  BudgetSpent spent_;
};

}  // namespace cutegen
