#pragma once
// What the loop asks the LLM, as an interface: the real one renders prompts/ templates
// (template_prompter.h); the loop's tests use a fake whose prompts say which kind they are, so
// scripted answers can check they were asked the right question.
#include <optional>
#include <string>
#include <vector>

#include "agent/evaluator.h"
#include "common/result.h"
#include "common/step_record.h"
#include "llm/llm_types.h"
#include "prompt/prompt_files.h"

namespace cutegen {

// What the diagnose and repair prompts know beyond the failing kernel: which optimisation broke it
// (empty while making a first synthesis correct) and the earlier rounds on this failure.
struct RepairContext {
  std::string change_under_repair;
  std::vector<StepRecord> attempts;  // kind repair: idea = the diagnosis acted on, verdict = what it led to
  std::string origin;                // the correct kernel the change was made to ("" at synthesis)
};

// One synthesis attempt that never became correct: how it ended in a line, and the evaluation it
// ended with (none when the answer held no usable kernel).
struct FailedAttempt {
  std::string summary;
  std::optional<Evaluation> last;
};

// One request of an optimisation step with several candidates (--candidates N): the menu item it is
// asked to apply and the ones the other requests take.
struct CandidateAsk {
  int step = 1;       // the optimisation step (the optimize request shows the item its step comes to in full)
  int candidate = 1;  // 1-based
  int candidates = 1;
  std::string item;
  std::vector<std::string> siblings;
};

class Prompter {
 public:
  virtual ~Prompter() = default;
  // The system message of every request of one kind for this problem: the same text in every call of
  // that kind through the run (the rules that apply, the kind's guide or menu, the problem), so the
  // providers' prompt caches can serve it.
  virtual Result<std::string> system_prompt(const ProblemInfo& problem, PromptKind kind) = 0;
  // The example kernel the synthesis and restart prompts show for this problem ("" for none), so the
  // run can record it: a first kernel that resembles the example is read in that light.
  virtual std::string example_shown(const ProblemInfo& problem) = 0;
  virtual Result<std::string> synthesis(const ProblemInfo& problem) = 0;
  // Synthesis again after every earlier attempt failed; `failures` says how each one ended.
  virtual Result<std::string> restart(const ProblemInfo& problem, const std::vector<FailedAttempt>& failures) = 0;
  virtual Result<std::string> diagnose(const ProblemInfo& problem, const std::string& kernel,
                                       const Evaluation& failed, const RepairContext& context) = 0;
  virtual Result<std::string> repair(const ProblemInfo& problem, const std::string& kernel, const Evaluation& failed,
                                     const std::string& diagnosis, const RepairContext& context) = 0;
  virtual Result<std::string> optimize(const ProblemInfo& problem, const std::string& kernel, const Evaluation& best,
                                       const std::vector<StepRecord>& history, const std::string& profile_summary,
                                       int step, int max_steps) = 0;
  // The optimisation menu's items for this problem ("1. Fuse everything into one pass", ...), which the
  // candidates of a step are given one each.
  virtual std::vector<std::string> menu_items(const ProblemInfo& problem) = 0;
  // What follows the optimize prompt for one candidate of a step with several (never with one).
  virtual Result<std::string> candidate_share(const ProblemInfo& problem, const CandidateAsk& ask) = 0;
};

// A request's messages as the loop sends them: the system message, marked as the run's stable prefix,
// then the prompt. `cutegen prompt` prints the same.
inline std::vector<Message> request_messages(const std::string& system, const std::string& prompt) {
  return {Message{Role::system, system, true}, Message{Role::user, prompt}};
}

}  // namespace cutegen
