#pragma once
// What `cutegen optimize` writes as result.json at its end (bench/task_record.h): the loop's typed
// result, or the error that ended it, as a task record. Pure, so it is tested without a GPU.
#include <string>

#include "agent/loop.h"
#include "bench/task_record.h"
#include "llm/budget.h"

namespace cutegen::bench {

// "the seed kernel for y = PATTERN failed the judge: VERDICT: REASON": a seed_failed task's detail, and
// the cause `cutegen optimize` ends with. Without the seed's evaluation it says only that it failed.
std::string seed_failure_line(const std::string& pattern, const std::optional<Evaluation>& seed);

// A finished loop: correct when it has a best kernel (its time, its baselines where it has them, else
// the problem's, SOL%), optimisation steps counted from the history, the LLM's spend.
TaskRecord task_record_from(const LoopResult& result, const std::string& problem, const BudgetSpent& spent);

// A loop that ended in an error: problem_error when the problem file is at fault (ErrorKind::problem_file),
// crashed otherwise; the detail is the error's first line.
TaskRecord task_record_from(const Error& error, const std::string& problem, const BudgetSpent& spent);

}  // namespace cutegen::bench
