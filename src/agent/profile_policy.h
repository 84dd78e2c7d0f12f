#pragma once
// Delayed profiling as a policy object: from which optimisation step a profile summary enters the
// prompt. Early in a GEMM's life the LLM is still building structure (tiling, staging, MMA), and
// hardware counters of a structurally wrong kernel mostly distract; for an elementwise kernel the
// structure is trivial and the counters (bandwidth, access width) are the whole story at once.
// The policy is a value so its effect can be measured by running the same task under several.
#include <map>
#include <string>

#include "common/result.h"

namespace cutegen {

class ProfilePolicy {
 public:
  enum class Mode { automatic, always, never, from_step };

  // "auto", "always", "never" or a step number N >= 1 (the --profile-from flag).
  static Result<ProfilePolicy> parse(const std::string& text);

  // `step`: the optimisation step about to be prompted (1-based). `non_improving_streak`: how many
  // steps in a row ended without a new best (a plateau ends the structural phase early).
  bool should_profile(const std::string& workload_class, int step, int non_improving_streak) const;
  // One line for the run log: which rule decided.
  std::string explain(const std::string& workload_class, int step, int non_improving_streak) const;

  // automatic mode's first profiled step per workload class (overridable from config).
  void set_first_step(const std::string& workload_class, int step) { first_step_[workload_class] = step; }
  int first_step(const std::string& workload_class) const;
  Mode mode() const { return mode_; }
  std::string to_string() const;

  static constexpr int kPlateauSteps = 2;  // steps without improvement that end the structural phase

 private:
  Mode mode_ = Mode::automatic;
  int from_step_ = 1;
  std::map<std::string, int> first_step_ = {
      {"elementwise", 1}, {"reduction", 3}, {"gemm", 4}, {"conv", 4}, {"attention", 4}, {"other", 2}};
};

}  // namespace cutegen
