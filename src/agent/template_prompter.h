#pragma once
// The real Prompter: the prompt files in prompts/ rendered by the prompt stage's builders, with the
// loop's data (the evaluation record, the step history) mapped onto the prompt stage's plain structs.
#include <memory>

#include "agent/prompter.h"
#include "prompt/prompt_builders.h"

namespace cutegen {

class TemplatePrompter : public Prompter {
 public:
  // Loads and checks every prompt file up front: a broken prompt stops the run before the first call.
  static Result<std::unique_ptr<TemplatePrompter>> create(Precision precision = Precision::strict);
  explicit TemplatePrompter(PromptLibrary library, Precision precision)
      : library_(std::move(library)), precision_(precision) {}

  Result<std::string> system_prompt() override;
  std::string example_shown(const ProblemInfo& problem) override;
  Result<std::string> synthesis(const ProblemInfo& problem) override;
  Result<std::string> restart(const ProblemInfo& problem, const std::vector<FailedAttempt>& failures) override;
  Result<std::string> diagnose(const ProblemInfo& problem, const std::string& kernel, const Evaluation& failed,
                               const RepairContext& context) override;
  Result<std::string> repair(const ProblemInfo& problem, const std::string& kernel, const Evaluation& failed,
                             const std::string& diagnosis, const RepairContext& context) override;
  Result<std::string> optimize(const ProblemInfo& problem, const std::string& kernel, const Evaluation& best,
                               const std::vector<StepRecord>& history, const std::string& profile_summary, int step,
                               int max_steps) override;

 private:
  PromptLibrary library_;
  Precision precision_;
};

// The mappings, exposed for tests.
Result<ProblemBrief> problem_brief(const ProblemInfo& problem, Precision precision);
Result<FailureEvidence> failure_evidence(const Evaluation& failed);

}  // namespace cutegen
