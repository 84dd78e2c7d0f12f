#pragma once
// report.md of a run: the problem, the baselines and the roofline floor, which example kernel the
// first prompt showed, every optimisation step with its outcome, the best kernel's numbers and why the
// run stopped. Typed data in (the evaluation record, the step history), so it is built the same way
// from a live run and from a resumed one.
#include <optional>
#include <string>
#include <vector>

#include "common/evaluation.h"
#include "common/step_record.h"

namespace cutegen {

struct RunSummary {
  std::string problem_name;
  WorkloadClass workload_class = WorkloadClass::other;
  Baselines baselines;
  std::optional<Floor> floor;
  std::string example_shown;         // the example kernel of the synthesis prompt ("" for none)
  std::string seed_pattern;          // the run started from cutegen's seed kernel for this chain ("" if not)
  std::string stop_reason;
  std::string stop_detail;           // declined: the LLM's reason
  std::vector<StepRecord> history;
  std::optional<Evaluation> best;
  std::optional<Evaluation> failed_seed;  // the seed's evaluation when it failed the judge
  int syntheses = 0;
  int llm_calls = 0;
  long long tokens = 0;
  long long input_tokens = 0;         // of `tokens`: the prompts'
  long long cached_input_tokens = 0;  // of those: read from the provider's prompt cache
  double cost_usd = 0;
  std::string llm;                   // backend:model
  std::string profile_policy;
};

// report.md, its control characters escaped (terminal_safe): it is printed at the end of a run.
std::string render_run_report(const RunSummary& s);

// Why the run stopped, as a sentence fragment ("step limit reached"); a decline quotes the LLM, a
// failed seed says how it failed.
std::string stop_reason_text(const RunSummary& s);

}  // namespace cutegen
