#pragma once
// `cutegen optimize` without an LLM (no --llm and no llm.backend configured, or --llm none): the seed
// path (docs/seed.md). Trace, match, generate, judge in full, export best/ and report.md like a run.
#include <string>

#include "cli/commands.h"
#include "cli/judge_stack.h"

namespace cutegen::cli {

struct SeedOptimizeArgs {
  std::string problem;
  std::string out;     // the run directory; empty: a new cutegen-runs/<problem>-...
  bool resume = false;
  JudgeArgs judge;
};

// The process exit code. An unmatched problem fails with one line before anything is written or a
// GPU is needed: "no seed for this operator graph: <ops> (<reason>); give --llm".
int run_seed_optimize(const GlobalOptions& global, const SeedOptimizeArgs& args);


}  // namespace cutegen::cli
