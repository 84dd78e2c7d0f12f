#pragma once
// The real Prompter: the prompt files in prompts/ rendered by the prompt stage's builders, with the
// loop's data (the evaluation record, the step history) mapped onto the prompt stage's plain structs.
#include <memory>

#include "agent/prompter.h"
#include "prompt/prompt_builders.h"
#include "run/judge.h"

namespace cutegen {

// What the run decides about its prompts, beyond the problem.
struct PromptSettings {
  Precision precision = Precision::strict;
  std::string arch = "sm_90a";  // what the run compiles for (CompileOptions' default)
  // --examples: show the library kernel chosen for the problem at synthesis and restart ("library"),
  // or none (the paper's from-scratch setting).
  bool show_example = true;
  bool gpu_placeholders = false;  // `cutegen prompt`: labelled placeholders for what needs a GPU
  // The judge's generalization trials in this run (--generalize): the rules say how many other shapes a passing
  // kernel is run at, or that only the problem's own is judged.
  int other_shapes = kDefaultGeneralize;
};

class TemplatePrompter : public Prompter {
 public:
  // Loads and checks every prompt file up front: a broken prompt stops the run before the first call.
  static Result<std::unique_ptr<TemplatePrompter>> create(PromptSettings settings = {});
  TemplatePrompter(PromptLibrary library, PromptSettings settings);

  Result<std::string> system_prompt(const ProblemInfo& problem, PromptKind kind) override;
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
  std::vector<std::string> menu_items(const ProblemInfo& problem) override;
  Result<std::string> candidate_share(const ProblemInfo& problem, const CandidateAsk& ask) override;

 private:
  PromptLibrary library_;
  PromptSettings settings_;
  PromptOptions options_;
};

// The mappings, exposed for tests.
Result<ProblemBrief> problem_brief(const ProblemInfo& problem, const PromptSettings& settings);
Result<FailureEvidence> failure_evidence(const Evaluation& failed);

}  // namespace cutegen
