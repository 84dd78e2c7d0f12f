#pragma once
// One rule for answers cut off at the token limit: after kLimit of them in a row for one task the
// next would be cut off too (the limit is too low for what is asked, or the model is looping), so
// the task stops with advice instead of paying for more. The client consults the guard a caller
// passes in CallOptions; the agent loop keeps one per task and feeds it answers replayed from its
// log as well, so a resumed run stops at the same point.
#include <mutex>
#include <optional>
#include <string>

#include "common/result.h"
#include "llm/llm_types.h"

namespace cutegen {

class TruncationGuard {
 public:
  static constexpr int kLimit = 2;

  // An Error of kind truncated_repeatedly, with the advice, once kLimit answers in a row were cut off.
  Status check() const;
  // Counts a cut-off answer; any other answer ends the run of them. `max_tokens`: the limit the
  // request was sent with (empty when unknown), `capped_by_budget`: the budget lowered it.
  void observe(const LlmResponse& response, std::optional<int> max_tokens = std::nullopt,
               bool capped_by_budget = false);
  int consecutive() const;

 private:
  mutable std::mutex mu_;
  int consecutive_ = 0;
  std::optional<int> last_max_tokens_;
  bool last_capped_ = false;
};

}  // namespace cutegen
