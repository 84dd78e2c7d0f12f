#pragma once
// What the loop asks the LLM, as an interface: the real one renders prompts/ templates
// (template_prompter.h); the loop's tests use a fake whose prompts say which kind they are, so
// scripted answers can check they were asked the right question.
#include <optional>
#include <string>
#include <vector>

#include "agent/evaluator.h"
#include "common/result.h"

namespace cutegen {

// One optimisation step as the history in later prompts shows it (one line each).
struct LoopStep {
  int step = 0;
  std::string idea;     // the LLM's own one-line name for the optimisation
  std::string outcome;  // accepted | slower | incorrect | unusable_edit
  std::optional<double> time_ms;
  std::string note;     // e.g. "1.31x over best", "mismatch after 4 repairs"
  std::optional<double> speedup;  // best time before this step / this step's time

  nlohmann::json to_json() const;
  static LoopStep from_json(const nlohmann::json& j);
};

// What the diagnose and repair prompts know beyond the failing kernel: which optimisation broke it
// (empty while making a first synthesis correct) and the earlier rounds on this failure.
struct RepairContext {
  std::string change_under_repair;
  std::vector<LoopStep> attempts;  // idea: the diagnosis acted on; outcome: the verdict it led to
};

// One synthesis attempt that never became correct: how it ended in a line, and the evaluation it
// ended with (none when the answer held no usable kernel).
struct FailedAttempt {
  std::string summary;
  std::optional<Evaluation> last;
};

class Prompter {
 public:
  virtual ~Prompter() = default;
  virtual Result<std::string> system_prompt() = 0;  // the rules, sent with every request
  virtual Result<std::string> synthesis(const ProblemInfo& problem) = 0;
  // Synthesis again after every earlier attempt failed; `failures` says how each one ended.
  virtual Result<std::string> restart(const ProblemInfo& problem, const std::vector<FailedAttempt>& failures) = 0;
  virtual Result<std::string> diagnose(const ProblemInfo& problem, const std::string& kernel,
                                       const Evaluation& failed, const RepairContext& context) = 0;
  virtual Result<std::string> repair(const ProblemInfo& problem, const std::string& kernel, const Evaluation& failed,
                                     const std::string& diagnosis, const RepairContext& context) = 0;
  virtual Result<std::string> optimize(const ProblemInfo& problem, const std::string& kernel, const Evaluation& best,
                                       const std::vector<LoopStep>& history, const std::string& profile_summary,
                                       int step, int max_steps) = 0;
};

}  // namespace cutegen
