#pragma once
// Runs a suite's tasks: `jobs` at a time over the lanes, each task under its lock, skipping tasks
// already over (any scheduler's), stopping new starts when a suite budget is reached. The task
// itself is behind TaskRunner: a child `cutegen optimize` (optimize_runner.h), the worker's baselines
// (baseline_runner.h), or a fake in tests.
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/lanes.h"
#include "bench/suite_dir.h"

namespace cutegen::bench {

struct TaskRun {
  TaskRecord record;        // verdict and numbers; the scheduler fills name, lane, host, times
  bool stop_suite = false;  // the task could not even start for a reason every task shares (no LLM key)
};

class TaskRunner {
 public:
  virtual ~TaskRunner() = default;
  // Runs one task to its end on `lane`; `slot` (0 .. jobs-1) names per-slot resources. Must not
  // throw; a failure is a record (crashed, problem_error) or stop_suite.
  virtual TaskRun run(const ProblemTask& task, const Lane& lane, int slot) = 0;
};

struct SuiteBudget {
  std::optional<double> max_cost_usd;
  std::optional<long long> max_tokens;
  std::optional<double> max_wall_s;  // of this scheduler: no task starts after it
};

struct SchedulerOptions {
  int jobs = 1;
  std::vector<Lane> lanes;
  SuiteBudget budget;
  bool retry_crashed = false;
  std::string shard;  // "i/N" or ""
  std::string host;
};

// What progress displays read.
struct LaneView {
  std::string lane;
  std::vector<std::pair<std::string, double>> running;  // task, seconds since it started
};
struct SchedulerView {
  int total = 0;  // tasks of this scheduler's share
  int done = 0, failed = 0, skipped = 0, running = 0, waiting = 0;
  double cost_usd = 0;
  double elapsed_s = 0;
  std::optional<double> eta_s;
  std::vector<LaneView> lanes;
};

struct SchedulerObserver {
  // A task started (ended false) or ended (true), with a line saying so.
  std::function<void(const SchedulerView&, const std::string& line, bool ended)> event;
  std::function<void(const SchedulerView&)> tick;                            // about once a second
};

struct SchedulerResult {
  int ran = 0, skipped = 0, not_started = 0;
  std::string stopped;  // why new tasks stopped being started ("" when every task was handled)
};

class Scheduler {
 public:
  Scheduler(SuiteDir& suite, TaskRunner& runner, SchedulerOptions options, SchedulerObserver observer = {});
  // Runs `tasks` (this scheduler's share). Error: the suite directory failed (cannot write a record).
  Result<SchedulerResult> run(const std::vector<ProblemTask>& tasks);

 private:
  enum class Claim { run, skip, stop };
  // Under the task's lock: whether to run it; `why` says why not.
  Claim claim(const ProblemTask& task, FileLock& lock, std::optional<TaskRecord>& previous, std::string& why);
  std::string budget_reached();
  void worker(int slot);
  SchedulerView view_locked() const;
  void emit(const std::string& line, bool ended);

  SuiteDir& suite_;
  TaskRunner& runner_;
  SchedulerOptions options_;
  SchedulerObserver observer_;
  std::chrono::steady_clock::time_point start_;

  mutable std::mutex mu_;
  std::vector<ProblemTask> queue_;
  size_t next_ = 0;
  struct Running {
    std::string task;
    size_t lane;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<std::optional<Running>> slots_;
  int done_ = 0, failed_ = 0, skipped_ = 0, not_started_ = 0;
  double finished_wall_s_ = 0;  // sum over tasks this scheduler ran, for the ETA
  std::string stopped_;
  std::optional<Error> error_;
};

}  // namespace cutegen::bench
