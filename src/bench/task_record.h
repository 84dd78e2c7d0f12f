#pragma once
// What one task of a suite came to, as types. Two files carry it:
//   tasks/<name>/result.json  written by `cutegen optimize` itself at the end of its run (also a
//                             standalone run has it): the verdict and the numbers of the best kernel
//   results/<name>.json       written by the bench scheduler once the task is over: the same record
//                             plus where and when it ran (lane, host, shard, wall and GPU-busy time)
// The summary (summary.h) is computed from the second only, so `bench status`/`bench report` merge
// whatever any number of schedulers on any number of nodes have finished.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/result.h"

namespace cutegen::bench {

// `cutegen optimize` without an LLM exits with kExitNoSeed (common/exit_codes.h) when the problem has no
// seed (docs/seed.md): it stops before making a run directory, so there is no result.json, and the
// scheduler records the task as no_correct_kernel (stop reason no_seed) instead of taking it for a
// failure every task shares.
using cutegen::kExitNoSeed;

enum class TaskVerdict {
  correct,            // optimize found a correct kernel (whatever stopped it afterwards)
  no_correct_kernel,  // optimize ended without one (stop_reason says why: attempts, budget, ...)
  measured,           // --baselines-only: the baselines were measured
  problem_error,      // the problem file does not import, build or run (detail: the worker's line)
  crashed,            // the task's process died or failed for another reason (detail: how)
  not_started,        // not run (yet): a suite budget, a setup failure, or simply not reached
  running,            // only in `bench status`: a scheduler holds its lock now
};
std::string_view to_string(TaskVerdict v);
Result<TaskVerdict> parse_task_verdict(std::string_view word);
// A verdict a re-run keeps rather than runs again (crashed only with --retry-crashed).
bool is_final(TaskVerdict v);

struct TaskRecord {
  std::string name;
  std::string problem;              // the problem file, absolute
  std::optional<int> number;        // KernelBench task number
  std::string mode = "optimize";    // optimize | baselines
  TaskVerdict verdict = TaskVerdict::not_started;
  std::string detail;               // one line: the error, the stop reason's detail, why not started
  std::string stop_reason;          // optimize's: steps, plateau, target, declined, budget, ...
  std::string device;               // the worker's device name ("NVIDIA H200", "cpu": CPU times are no GPU numbers)
  // The best kernel and the problem's baselines and floor, milliseconds.
  std::optional<double> best_ms, eager_ms, compile_ms, floor_ms, sol_pct;
  std::string eager_error, compile_error;  // why a baseline could not be measured
  std::string floor_bound;                 // memory | compute
  uint64_t flops = 0, min_bytes = 0;
  int steps = 0, syntheses = 0, llm_calls = 0;
  long long tokens = 0;
  double cost_usd = 0;
  std::string example;              // the example kernel the first prompt showed
  std::string seed;                 // the seed pattern judged first (docs/seed.md), "" when none matched
  std::optional<double> seed_ms;    // the seed's own time when it passed: what no LLM reached, against best_ms
  // Where and when (the scheduler's part).
  std::string lane;                 // "gpu0", "cpu"
  std::string host;
  std::string shard;                // "i/N" or ""
  double started_at = 0, finished_at = 0;  // Unix seconds
  double wall_s = 0;
  double gpu_busy_s = 0, gpu_wait_s = 0;   // time holding the device lock / waiting for it
  int attempts = 0;                 // how many times a scheduler started it

  // Derived: over eager / torch.compile (baseline / best), and the best speedup physics allows over
  // eager (eager / floor).
  std::optional<double> speedup_eager() const;
  std::optional<double> speedup_compile() const;
  std::optional<double> physics_speedup() const;

  nlohmann::json to_json() const;
  static Result<TaskRecord> from_json(const nlohmann::json& j);  // Error names the field
};

// One task record from its file (the task's result.json or the suite's results/<name>.json): none when
// the file is absent; an Error naming the file when it is not JSON or a field is wrong.
Result<std::optional<TaskRecord>> read_task_record(const std::filesystem::path& file);

// A results/<name>.json that cannot be read: not JSON (cut short, edited), a field of the wrong type,
// unreadable. `bench status` and `bench report` say so in one line and leave the task out of the
// summary instead of failing for the whole suite.
struct DamagedRecord {
  std::string task;
  std::string path;  // the file
  std::string why;   // what is wrong with it
  std::string line() const;  // "PATH: WHY", one line
};

}  // namespace cutegen::bench
