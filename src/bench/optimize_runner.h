#pragma once
// A task as a child `cutegen optimize` process in tasks/<name>/: a crash or GPU fault ends only that
// task, Ctrl-C ends the child with the scheduler (the child registry), and the child dies with the
// scheduler even after a kill -9 (it asks for a parent-death signal: CUTEGEN_PARENT_PID). A task
// whose run directory exists is continued with --resume, which replays its log: no LLM call or
// evaluation is done twice (a task stopped before its first event has an empty log, and --resume
// starts it from the beginning).
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/scheduler.h"
#include "common/process.h"

namespace cutegen::bench {

struct OptimizeRunnerOptions {
  std::filesystem::path executable;       // cutegen (or a stand-in in tests)
  std::vector<std::string> global_args;   // before the subcommand (--config FILE)
  std::vector<std::string> task_args;     // after the problem: --llm, --steps, budgets, judge options
  std::chrono::seconds timeout{0};        // per task; 0: none
};

class OptimizeTaskRunner final : public TaskRunner {
 public:
  OptimizeTaskRunner(ProcessRunner& processes, const SuiteDir& suite, OptimizeRunnerOptions options)
      : processes_(processes), suite_(suite), options_(std::move(options)) {}
  TaskRun run(const ProblemTask& task, const Lane& lane, int slot) override;

  // The child's command line for `task` (resume: its run directory exists).
  std::vector<std::string> command(const ProblemTask& task, const Lane& lane, bool resume) const;

 private:
  ProcessRunner& processes_;
  const SuiteDir& suite_;
  OptimizeRunnerOptions options_;
};

// The record a finished optimize run left (tasks/<name>/result.json), if any.
Result<std::optional<TaskRecord>> read_task_result(const std::filesystem::path& run_dir);
inline constexpr const char* kTaskResultFile = "result.json";

// The last line of a process's stderr that says why it failed ("cutegen: ..."), else its last line.
std::string failure_line(const std::string& err);

}  // namespace cutegen::bench
