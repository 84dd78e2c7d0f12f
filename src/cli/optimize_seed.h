#pragma once
// `cutegen optimize` without an LLM (no --llm and no llm.backend configured, or --llm none): the loop
// runs seed-only (LoopOptions::seed_only) with a backend that has no answers, so the run directory,
// event log, best/ and reports are those of any run (docs/seed.md).
#include <memory>

#include "llm/llm_types.h"

namespace cutegen::cli {

// kind "none": complete() is an Error. A seed-only loop never calls it; if it ever did, the run would
// stop saying so instead of inventing an answer.
std::unique_ptr<LlmBackend> make_no_llm_backend();

}  // namespace cutegen::cli
