#pragma once
// A suite directory, shared by every scheduler of the suite (reruns, Slurm shards on other nodes):
//   suite.json           the manifest: the settings that decide what a task does, and every task
//                        any run of the suite has listed (name, problem file, number)
//   tasks/<name>/        the task's `cutegen optimize` run directory (optimize --resume, report.md)
//   results/<name>.json  the scheduler's record once the task is over (task_record.h); what the
//                        summary reads
//   logs/<name>.log      what the task's process printed, every attempt appended
//   locks/<name>.lock    held by the scheduler running the task: two schedulers never run one task
//   slurm/               bench.sbatch and each shard's output
//   summary.md, summary.csv, summary.json
// Every file is written atomically or appended whole, so a kill -9 anywhere leaves the suite readable.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/problem_set.h"
#include "bench/task_record.h"
#include "common/file_lock.h"
#include "common/result.h"

namespace cutegen::bench {

struct Manifest {
  std::string mode;              // optimize | baselines
  std::string llm;               // optimize: the --llm spec
  nlohmann::json settings;       // what decides a task's outcome (steps, budgets per task, precision, device, ...)
  std::vector<ProblemTask> tasks;

  nlohmann::json to_json() const;
  static Result<Manifest> from_json(const nlohmann::json& j);
};

// What the suite's LLM calls have cost so far, from every task's usage.jsonl (replayed calls excluded).
struct Spend {
  double cost_usd = 0;
  long long tokens = 0;
  long long calls = 0;
};

class SuiteDir {
 public:
  // Creates the layout and merges `manifest` into suite.json: the settings and mode must be those the
  // suite was started with (Error naming the first difference), tasks are added to those listed
  // before (a later run may widen --filter; a name must keep its problem file).
  static Result<SuiteDir> open(const std::filesystem::path& dir, const Manifest& manifest);
  // An existing suite, for status and report. Error: not a suite directory.
  static Result<SuiteDir> open_existing(const std::filesystem::path& dir);

  const std::filesystem::path& path() const { return dir_; }
  const Manifest& manifest() const { return manifest_; }
  std::filesystem::path task_dir(const std::string& name) const { return dir_ / "tasks" / name; }
  std::filesystem::path result_path(const std::string& name) const { return dir_ / "results" / (name + ".json"); }
  std::filesystem::path log_path(const std::string& name) const { return dir_ / "logs" / (name + ".log"); }
  std::filesystem::path lock_path(const std::string& name) const { return dir_ / "locks" / (name + ".lock"); }

  // The scheduler's record of a task; empty when there is none. Error: a damaged record file.
  Result<std::optional<TaskRecord>> read_record(const std::string& name) const;
  Status write_record(const TaskRecord& record) const;
  Status append_log(const std::string& name, const std::string& text) const;
  // Held by another process right now (its lock cannot be taken).
  bool running(const std::string& name) const;
  // One record per task of the manifest: its result, else `running` or `not_started` — except the
  // tasks whose result file is damaged, which are left out and listed in `damaged`.
  struct Collected {
    std::vector<TaskRecord> records;
    std::vector<DamagedRecord> damaged;
  };
  Collected collect() const;
  Spend spend() const;

 private:
  SuiteDir(std::filesystem::path dir, Manifest m) : dir_(std::move(dir)), manifest_(std::move(m)) {}
  std::filesystem::path dir_;
  Manifest manifest_;
};

}  // namespace cutegen::bench
