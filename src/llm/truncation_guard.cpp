#include "llm/truncation_guard.h"

#include <fmt/format.h>

namespace cutegen {

Status TruncationGuard::check() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (consecutive_ < kLimit) return ok_status();
  std::string limit = last_max_tokens_ ? fmt::format(" (max_tokens {})", *last_max_tokens_) : "";
  std::string advice =
      last_capped_
          ? "the budget lowered max_tokens to what it had left: raise the budget (llm.budget, --max-cost, --max-tokens)"
          : "raise llm.max_tokens, or the model is looping on this prompt";
  return Error{fmt::format("the last {} answers were cut off at the token limit{}; not asking again: {}", consecutive_,
                           limit, advice),
               ErrorKind::truncated_repeatedly};
}

void TruncationGuard::observe(const LlmResponse& response, std::optional<int> max_tokens, bool capped_by_budget) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!response.truncated()) {
    consecutive_ = 0;
    return;
  }
  ++consecutive_;
  last_max_tokens_ = max_tokens;
  last_capped_ = capped_by_budget;
}

int TruncationGuard::consecutive() const {
  std::lock_guard<std::mutex> lock(mu_);
  return consecutive_;
}

}  // namespace cutegen
