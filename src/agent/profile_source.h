#pragma once
// Where profile summaries come from, as the loop sees it: the Nsight Compute stage behind an adapter,
// or a fake. The loop only asks when the profiling policy says the summary will be used.
#include <string>

#include "agent/evaluator.h"
#include "common/result.h"

namespace cutegen {

class ProfileSource {
 public:
  virtual ~ProfileSource() = default;
  // A short text for the prompt. When counters cannot be read the text says so (timing only); an
  // Error is reserved for the tool failing outright, and the loop then goes on without a profile.
  virtual Result<std::string> summary(const std::string& kernel_source, const Evaluation& evaluation) = 0;
};

}  // namespace cutegen
