#pragma once
// One step of the loop as its history keeps it: what was tried and how it ended. The loop writes it,
// the prompts show it (prompt/history.h), the run log and report.md record it: one type, so a step's
// outcome cannot mean one thing in the loop and another in a prompt.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"
#include "common/result.h"

namespace cutegen {

enum class StepKind {
  optimization,  // one optimisation of the best kernel
  repair,        // one diagnose+repair round on a failing kernel
  synthesis,     // one attempt at a first kernel (the restart prompt lists them)
  tuning,        // `cutegen tune` on the best kernel's knobs after an accepted step (`n`: that step, 0: the first kernel)
};
std::string_view to_string(StepKind k);

enum class StepOutcome {
  accepted,   // correct and faster than the best before it by more than the noise: kept (tuning: the chosen values)
  slower,     // correct but not faster than that: rolled back (tuning: the kernel's own defaults stay)
  incorrect,  // did not become correct (`verdict`: how it last failed): rolled back
  undone,     // broke correctness, and the repair only undid the change: the idea failed (`verdict`, `evidence`)
  unusable,   // the answer could not be used (its format, edits that did not apply; tuning: knobs declared wrongly)
  declined,   // the LLM answered NO_FURTHER_CHANGE (`note`: its reason)
};
std::string_view to_string(StepOutcome o);  // the word the run log and report.md use

// One proposal of an optimisation step that asked for several (--candidates): what it tried and what
// became of it. The step's own fields describe the chosen one.
enum class CandidateOutcome {
  chosen,    // the fastest in screening (or the only one left): judged in full; the step's outcome says the rest
  lost,      // correct in screening but slower than the chosen one
  failed,    // did not compile, or failed screening (`verdict`, `note`: the reason); or the same kernel as another
  unusable,  // the answer could not be used (`note`)
  declined,  // NO_FURTHER_CHANGE (`note`: its reason)
};
std::string_view to_string(CandidateOutcome o);
std::optional<CandidateOutcome> parse_candidate_outcome(std::string_view word);

struct CandidateRecord {
  int n = 0;                          // 1-based
  std::string item;                   // the menu item it was asked for
  std::string idea;                   // its OPTIMIZATION line ("" when unusable or declined)
  CandidateOutcome outcome = CandidateOutcome::failed;
  std::optional<Verdict> verdict;     // failed: how
  std::optional<double> screened_ms;  // its screened median (a rank, never a result)
  std::string note;

  nlohmann::json to_json() const;
  static Result<CandidateRecord> from_json(const nlohmann::json& j);
};

struct StepRecord {
  StepKind kind = StepKind::optimization;
  int n = 0;                       // the step, repair round or attempt number
  std::string idea;                // the LLM's one-line name for what it tried
  StepOutcome outcome = StepOutcome::accepted;
  std::optional<Verdict> verdict;  // incorrect and undone: the failing verdict
  std::optional<double> time_ms;   // median time when the kernel ran correctly
  std::optional<double> speedup;   // the best time before this step / this time (> 1 is faster)
  std::string note;                // only what the fields above do not say: the failure's reason, the noise, a reason to decline
  std::string evidence;            // undone: the judge's evidence that the idea broke the kernel (condensed)
  std::vector<CandidateRecord> candidates;  // a step with several candidates: every one, in order; else empty

  nlohmann::json to_json() const;
  // Reads what to_json wrote (the run log's step decisions, which the run report reads back).
  // Error: a field is missing or has the wrong type, naming it.
  static Result<StepRecord> from_json(const nlohmann::json& j);
};

std::optional<StepKind> parse_step_kind(std::string_view word);
std::optional<StepOutcome> parse_step_outcome(std::string_view word);

}  // namespace cutegen
