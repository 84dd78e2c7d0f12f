#pragma once
// The one reading of what a run did: which kernels the judge evaluated, which became the best, which
// were rolled back, what each step tried. `--resume` checks its replay against it (agent/journal.h)
// and the reports render it (report/run_view.h), so the two cannot disagree about a run.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/evaluation.h"
#include "common/problem_info.h"
#include "common/step_record.h"
#include "runlog/run_log.h"

namespace cutegen {

// What became of one evaluated kernel.
enum class AttemptFate {
  accepted,     // became the best kernel (a first correct kernel, a step kept for being faster, a tuning kept)
  rolled_back,  // correct but never the best: the run went on from the best kernel
  failed,       // not correct (its verdict says how)
};
std::string_view to_string(AttemptFate f);

// One full evaluation the judge made, in log order.
struct HistoryAttempt {
  int index = 0;  // 1-based, in the order of the log
  AttemptLabel label;
  Evaluation evaluation;
  AttemptFate fate = AttemptFate::failed;
  std::string source_sha256;
  // The NNN of its steps/NNN-eval-<label>/ directory: the loop numbers LLM calls, evaluations and
  // tunings in log order (a resumed run replays the same order, so the numbering is stable).
  int artifact = 0;
};

// An optimisation step or a tuning, with the evaluations that belong to it.
struct HistoryStep {
  StepRecord record;
  std::vector<int> attempts;  // indexes: the step's kernel, then its repairs (a tuning: the kernel it chose)
  std::optional<int> base;    // the best kernel the step started from
};

// A profile summary as the LLM read it in an optimisation prompt.
struct HistoryProfile {
  int first_step = 0;         // the step whose prompt first carried it
  std::optional<int> kernel;  // the best kernel it profiles
  std::string summary;
};

struct RunHistory {
  std::optional<ProblemInfo> problem;
  std::string example_shown;
  std::vector<HistoryAttempt> attempts;
  std::vector<HistoryStep> steps;
  std::vector<HistoryProfile> profiles;
  std::optional<int> best;                 // the best kernel's attempt index, after the last logged decision
  int syntheses = 0;                       // synthesis attempts decided
  bool seed_passed = false;                // --start seed: the seed was the first best kernel
  std::optional<Evaluation> failed_seed;   // its evaluation when it failed
  std::optional<StopDecision> stop;        // absent: the run was stopped before it finished

  const HistoryAttempt* attempt(int index) const;
  const HistoryAttempt* best_attempt() const { return best ? attempt(*best) : nullptr; }
  // Indexes of the attempts that were correct but rolled back.
  std::vector<int> rolled_back() const;
  // One line for people: "3 evaluations, 2 steps decided; best: step1 (0.812 ms); rolled back: step2".
  std::string summary_line() const;
};

RunHistory run_history(const std::vector<LoggedEvent>& events);

}  // namespace cutegen
