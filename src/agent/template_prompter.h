#pragma once
// The real Prompter: the prompt files in prompts/ rendered by the prompt stage's builders, with the
// loop's data (judge results, history) mapped onto the prompt stage's plain structs.
#include <memory>

#include "agent/prompter.h"
#include "prompt/prompt_builders.h"

namespace cutegen {

class TemplatePrompter : public Prompter {
 public:
  // Loads and checks every prompt file up front: a broken prompt stops the run before the first call.
  static Result<std::unique_ptr<TemplatePrompter>> create(std::string precision = "strict");
  explicit TemplatePrompter(PromptLibrary library, std::string precision)
      : library_(std::move(library)), precision_(std::move(precision)) {}

  Result<std::string> system_prompt() override;
  Result<std::string> synthesis(const ProblemInfo& problem) override;
  Result<std::string> restart(const ProblemInfo& problem, const std::vector<FailedAttempt>& failures) override;
  Result<std::string> diagnose(const ProblemInfo& problem, const std::string& kernel, const Evaluation& failed,
                               const RepairContext& context) override;
  Result<std::string> repair(const ProblemInfo& problem, const std::string& kernel, const Evaluation& failed,
                             const std::string& diagnosis, const RepairContext& context) override;
  Result<std::string> optimize(const ProblemInfo& problem, const std::string& kernel, const Evaluation& best,
                               const std::vector<LoopStep>& history, const std::string& profile_summary, int step,
                               int max_steps) override;

 private:
  PromptLibrary library_;
  std::string precision_;
};

// The mappings, exposed for tests.
Result<ProblemBrief> problem_brief(const ProblemInfo& problem, const std::string& precision);
Result<FailureEvidence> failure_evidence(const Evaluation& failed);
StepRecord step_record(const LoopStep& step);

}  // namespace cutegen
