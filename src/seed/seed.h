#pragma once
// The seed stage: a problem's operator graph (traced by the worker) -> a matched pattern -> a
// candidate kernel generated without an LLM (docs/seed.md). Below the CLI, above the judge: the seed
// is evaluated by the caller like any other candidate.
#include <filesystem>
#include <string>

#include "common/result.h"
#include "run/reference_worker.h"
#include "seed/matcher.h"

namespace cutegen::seed {

struct SeedOutcome {
  SeedMatch match;
  std::string source;  // the generated kernel; empty when nothing matched
  bool found() const { return match.matched(); }
};

// Asks the worker to trace the problem (`trace`, no GPU needed). Error: the worker failed or the
// problem file is broken (its message says what to fix).
Result<OpGraph> trace_problem(ReferenceWorker& worker, const std::filesystem::path& problem);

// Matches the graph and generates the kernel for what matched. Error: a library kernel the seed
// instantiates no longer has the lines it sets (a cutegen bug the unit tests catch).
Result<SeedOutcome> seed_from_graph(const OpGraph& graph, const std::string& problem_name);

// Both, for a problem file.
Result<SeedOutcome> seed_for_problem(ReferenceWorker& worker, const std::filesystem::path& problem);

}  // namespace cutegen::seed
