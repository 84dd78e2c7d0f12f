#include "llm/budget.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

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

// --- BudgetClaim --------------------------------------------------------------------------------

BudgetClaim::BudgetClaim(BudgetClaim&& o) noexcept
    : budget_(std::exchange(o.budget_, nullptr)), tokens_(o.tokens_), usd_(o.usd_), max_output_(o.max_output_),
      shape_(o.shape_) {}

BudgetClaim& BudgetClaim::operator=(BudgetClaim&& o) noexcept {
  if (this != &o) {
    release();
    budget_ = std::exchange(o.budget_, nullptr);
    tokens_ = o.tokens_;
    usd_ = o.usd_;
    max_output_ = o.max_output_;
    shape_ = o.shape_;
  }
  return *this;
}

BudgetClaim::~BudgetClaim() { release(); }

void BudgetClaim::release() {
  if (!budget_) return;
  budget_->unreserve(tokens_, usd_, true);
  budget_ = nullptr;
}

void BudgetClaim::narrow(long long max_output) {
  if (!budget_ || (max_output_ && max_output >= *max_output_)) return;
  long long less = max_output_ ? *max_output_ - max_output : 0;
  double less_usd = static_cast<double>(less) * shape_.usd_per_output_token;
  budget_->unreserve(less, less_usd, false);
  tokens_ -= less;
  usd_ -= less_usd;
  max_output_ = max_output;
}

void BudgetClaim::settle(long long tokens, double cost_usd) {
  if (!budget_) return;
  std::lock_guard<std::mutex> lock(budget_->mu_);
  budget_->spent_.reserved_tokens = std::max(0LL, budget_->spent_.reserved_tokens - tokens_);
  budget_->spent_.reserved_usd = std::max(0.0, budget_->spent_.reserved_usd - usd_);
  budget_->spent_.tokens += tokens;
  budget_->spent_.cost_usd += cost_usd;
  budget_->end_claim_locked();
  budget_ = nullptr;
}

// --- Budget -------------------------------------------------------------------------------------

Budget::Budget(BudgetLimits limits, std::string name) : limits_(limits), name_(std::move(name)) {}

void Budget::unreserve(long long tokens, double usd, bool uncount_call) {
  std::lock_guard<std::mutex> lock(mu_);
  spent_.reserved_tokens = std::max(0LL, spent_.reserved_tokens - tokens);
  spent_.reserved_usd = std::max(0.0, spent_.reserved_usd - usd);
  if (uncount_call) {
    if (spent_.calls > 0) --spent_.calls;
    end_claim_locked();
  }
}

void Budget::end_claim_locked() {
  if (spent_.in_flight > 0) --spent_.in_flight;
  if (spent_.in_flight == 0) {
    spent_.reserved_tokens = 0;
    spent_.reserved_usd = 0;
  }
}

Error Budget::exhausted_locked(const std::string& why) const {
  std::string reserved;
  if (spent_.reserved_tokens > 0 || spent_.reserved_usd > 0)
    reserved = fmt::format("; {} tokens, ${:.4f} held by calls in flight", spent_.reserved_tokens, spent_.reserved_usd);
  return Error{fmt::format("{}: {} ({} call{}, {} tokens, ${:.4f} spent{})", kBudgetExhausted, why, spent_.calls,
                           spent_.calls == 1 ? "" : "s", spent_.tokens, spent_.cost_usd, reserved),
               ErrorKind::budget_exhausted};
}

Result<std::optional<long long>> Budget::grant_locked(const CallShape& s) const {
  if (limits_.max_calls && spent_.calls >= *limits_.max_calls)
    return exhausted_locked(fmt::format("the {} budget of {} calls is used up", name_, *limits_.max_calls));
  const long long needed = std::min(s.max_output.value_or(std::numeric_limits<long long>::max()), s.min_output);
  std::optional<long long> afford;
  if (limits_.max_tokens) {
    long long left = *limits_.max_tokens - spent_.tokens - spent_.reserved_tokens;
    long long room = left - s.prompt_tokens;
    if (left <= 0)
      return exhausted_locked(fmt::format("the {} budget of {} tokens is used up", name_, *limits_.max_tokens));
    if (room < needed)
      return exhausted_locked(fmt::format(
          "the {} budget of {} tokens leaves room for {} output tokens after this prompt (up to {} tokens); an answer "
          "needs {}",
          name_, *limits_.max_tokens, std::max(0LL, room), s.prompt_tokens, needed));
    afford = room;
  }
  if (limits_.max_cost_usd && (s.usd_per_input_token > 0 || s.usd_per_output_token > 0)) {
    double left = *limits_.max_cost_usd - spent_.cost_usd - spent_.reserved_usd;
    double prompt_usd = static_cast<double>(s.prompt_tokens) * s.usd_per_input_token;
    // Rounded down: the grant must never cost more than what is left.
    long long room = s.usd_per_output_token > 0
                         ? static_cast<long long>(std::floor(std::min((left - prompt_usd) / s.usd_per_output_token, 1e15)))
                         : (left >= prompt_usd ? std::numeric_limits<long long>::max() : -1);
    if (left <= 0)
      return exhausted_locked(fmt::format("the {} budget of ${:.4f} is used up", name_, *limits_.max_cost_usd));
    if (room < needed)
      return exhausted_locked(fmt::format(
          "the {} budget of ${:.4f} leaves room for {} output tokens after this prompt (up to ${:.4f}); an answer "
          "needs {}",
          name_, *limits_.max_cost_usd, std::max(0LL, room), prompt_usd, needed));
    afford = afford ? std::min(*afford, room) : room;
  }
  if (!afford) return s.max_output;
  return std::optional<long long>(s.max_output ? std::min(*s.max_output, *afford) : *afford);
}

Result<BudgetClaim> Budget::claim(const CallShape& shape) {
  std::lock_guard<std::mutex> lock(mu_);
  auto grant = grant_locked(shape);
  if (!grant) return grant.error();
  long long output = grant->value_or(0);
  long long tokens = shape.prompt_tokens + output;
  double usd = static_cast<double>(shape.prompt_tokens) * shape.usd_per_input_token +
               static_cast<double>(output) * shape.usd_per_output_token;
  ++spent_.calls;
  ++spent_.in_flight;
  spent_.reserved_tokens += tokens;
  spent_.reserved_usd += usd;
  return BudgetClaim(this, tokens, usd, *grant, shape);
}

Status Budget::check(const CallShape& shape) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto grant = grant_locked(shape);
  if (!grant) return grant.error();
  return ok_status();
}

Status Budget::replay_call(long long tokens, double cost_usd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (limits_.max_calls && spent_.calls >= *limits_.max_calls)
    return exhausted_locked(fmt::format("the {} budget of {} calls is used up", name_, *limits_.max_calls));
  if (limits_.max_tokens && spent_.tokens >= *limits_.max_tokens)
    return exhausted_locked(fmt::format("the {} budget of {} tokens is used up", name_, *limits_.max_tokens));
  if (limits_.max_cost_usd && spent_.cost_usd >= *limits_.max_cost_usd)
    return exhausted_locked(fmt::format("the {} budget of ${:.4f} is used up", name_, *limits_.max_cost_usd));
  ++spent_.calls;
  spent_.tokens += tokens;
  spent_.cost_usd += cost_usd;
  return ok_status();
}

BudgetSpent Budget::spent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spent_;
}

}  // namespace cutegen
