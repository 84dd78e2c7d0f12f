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

// The LLM run's first kernel for --start: `scratch` gives none; `auto` the seed when one matches
// (else none, said on stderr); `seed` the seed, or the no-seed line as an Error.
struct RunSeed {
  std::string source;   // empty: the LLM synthesises the first kernel
  std::string pattern;  // what the seed computes, for report.md
};
Result<RunSeed> seed_for_llm_run(const std::string& start, const std::string& problem);

}  // namespace cutegen::cli
