#include "llm/budget.h"

#include <fmt/format.h>

namespace cutegen {

bool is_budget_exhausted(const Error& error) { return error.kind == ErrorKind::budget_exhausted; }

Result<BudgetLimits> budget_limits_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return Error{fmt::format("config: {} must be an object", where)};
  BudgetLimits limits;
  for (const auto& [key, v] : j.items()) {
    if (key == "max_tokens" || key == "max_calls") {
      if (!v.is_number_integer() || v.get<long long>() < 0)
        return Error{fmt::format("config: {}.{} must be a non-negative integer", where, key)};
      (key == "max_tokens" ? limits.max_tokens : limits.max_calls) = v.get<long long>();
    } else if (key == "max_cost_usd") {
      if (!v.is_number() || v.get<double>() < 0)
        return Error{fmt::format("config: {}.max_cost_usd must be a non-negative number", where)};
      limits.max_cost_usd = v.get<double>();
    } else {
      return Error{fmt::format("config: unknown key {}.{} (known: max_tokens, max_cost_usd, max_calls)", where, key)};
    }
  }
  return limits;
}

Budget::Budget(BudgetLimits limits, std::string name) : limits_(limits), name_(std::move(name)) {}

Status Budget::check(long long next_tokens, double next_cost_usd) const {
  std::lock_guard<std::mutex> lock(mu_);
  return check_locked(next_tokens, next_cost_usd);
}

Status Budget::check_locked(long long next_tokens, double next_cost_usd) const {
  std::string reached;
  if (limits_.max_calls && spent_.calls >= *limits_.max_calls)
    reached = fmt::format("the {} budget of {} calls is used up", name_, *limits_.max_calls);
  else if (limits_.max_tokens && spent_.tokens >= *limits_.max_tokens)
    reached = fmt::format("the {} budget of {} tokens is used up", name_, *limits_.max_tokens);
  else if (limits_.max_cost_usd && spent_.cost_usd >= *limits_.max_cost_usd)
    reached = fmt::format("the {} budget of ${:.4f} is used up", name_, *limits_.max_cost_usd);
  else if (limits_.max_tokens && next_tokens > 0 && spent_.tokens + next_tokens > *limits_.max_tokens)
    reached = fmt::format("the next call (~{} tokens) would pass the {} budget of {} tokens", next_tokens, name_,
                          *limits_.max_tokens);
  else if (limits_.max_cost_usd && next_cost_usd > 0 && spent_.cost_usd + next_cost_usd > *limits_.max_cost_usd)
    reached = fmt::format("the next call (~${:.4f}) would pass the {} budget of ${:.4f}", next_cost_usd, name_,
                          *limits_.max_cost_usd);
  if (reached.empty()) return ok_status();
  return Error{fmt::format("{}: {} ({} calls, {} tokens, ${:.4f} spent)", kBudgetExhausted, reached, spent_.calls,
                           spent_.tokens, spent_.cost_usd),
               ErrorKind::budget_exhausted};
}

Status Budget::reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto ok = check_locked(0, 0); !ok) return ok;
  ++spent_.calls;
  return ok_status();
}

void Budget::release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (spent_.calls > 0) --spent_.calls;
}

void Budget::charge(long long tokens, double cost_usd) {
  std::lock_guard<std::mutex> lock(mu_);
  spent_.tokens += tokens;
  spent_.cost_usd += cost_usd;
}

BudgetSpent Budget::spent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spent_;
}

}  // namespace cutegen
