#pragma once
// `cutegen eval`: compile, run in an isolated runner on the worker's buffers, check every trial,
// time against live baselines, place on the roofline. The verdict is one word plus the evidence.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/process.h"
#include "compile/compiler.h"
#include "run/reference_worker.h"
#include "run/roofline.h"

namespace cutegen {

struct EvalOptions {
  std::string precision = "strict";  // strict | tf32 | bf16
  int trials = 5;                    // problem-input trials; signed and scaled trials come on top
  int timing_sets = 4;
  int warmup = 10;
  int runs = 100;
  uint64_t seed = 0;                 // 0: fresh seeds, recorded in the report
  bool baselines = true;
  std::chrono::seconds runner_timeout{120};
  std::filesystem::path runner;      // the cutegen-runner executable
  std::filesystem::path work_dir;    // job/result files; kept for inspection
  std::filesystem::path cache_root;  // calibration and baseline caches
};

// Verdicts, in the order the judge finds them.
enum class Verdict {
  pass,
  compile_error, rejected,                       // from the compile stage
  load_failed, kernel_error, cuda_error, crash, timeout, printed_output,  // the runner
  mismatch, unwritten, nondeterministic, input_mutated,                   // the checks
  hidden_work,                                   // timing cross-check
  result_reuse,                                  // same pointers, new inputs, old answer
};
std::string to_string(Verdict v);

struct EvalReport {
  Verdict verdict = Verdict::pass;
  std::string reason;                 // one line
  std::string evidence;               // what the diagnose step reads (condensed)
  nlohmann::json problem;             // worker metadata
  CompileOutcome compile;
  nlohmann::json checks = nlohmann::json::array();  // the worker's check reports
  nlohmann::json timing;              // runner timing (event and host stats)
  nlohmann::json baselines;           // eager / compile stats
  std::optional<Floor> floor;
  std::vector<uint64_t> seeds;
  double seconds = 0;                 // wall time of the whole evaluation
  // Where that wall time went (compile, load, prepare, runner, check, baselines, roofline): the
  // harness's overhead beyond the kernel's own runs, and what to speed up when eval feels slow.
  std::map<std::string, double> phase_seconds;

  bool passed() const { return verdict == Verdict::pass; }
  double median_ms() const;
  nlohmann::json to_json() const;
  std::string summary() const;        // the compact human view
};

class Judge {
 public:
  Judge(Compiler& compiler, ReferenceWorker& worker, ProcessRunner& runner, EvalOptions options);
  // Error: the tool or the problem file failed (message says what to fix). A failing kernel is a report.
  Result<EvalReport> evaluate(const std::filesystem::path& problem, const std::string& kernel_source,
                              const std::string& kernel_name);
  // The problem without a candidate: metadata, live baselines (when enabled) and the roofline floor.
  // What the first prompt is built from.
  Result<EvalReport> describe(const std::filesystem::path& problem);

  // What a profiler wraps: a runner command that calls `library` `calls` times on the timing inputs of
  // the judge's last `prepare` (evaluate() or describe(); no checks, no warm-up, no L2 flush: ncu
  // flushes caches itself). The worker keeps those buffers until the next prepare, so run the
  // command before evaluating again. Any evaluation's inputs fit any candidate of the problem.
  // When the last prepare holds no timing inputs (nothing evaluated in this process, as after a
  // resumed run replayed every evaluation, or a failed early batch of a large problem), `problem`
  // is loaded and timing inputs alone are prepared.
  // Error: the worker cannot load or prepare, or the job file cannot be written.
  struct RunnerInvocation {
    std::vector<std::string> argv;
    std::filesystem::path job, result;
  };
  Result<RunnerInvocation> profiling_run(const std::filesystem::path& problem, const std::filesystem::path& library,
                                         int calls);

 private:
  Result<nlohmann::json> load_problem(const std::filesystem::path& problem);
  Status prepare_timing_inputs();  // a prepare without correctness trials, into prepared_
  Status run_candidate(const nlohmann::json& prepared, const CompileOutcome& compiled, EvalReport& report);
  Status check_trials(const nlohmann::json& prepared, size_t first_index, EvalReport& report);
  void check_timing(EvalReport& report);
  Status check_timing_outputs(EvalReport& report);
  Status measure_baselines(EvalReport& report);
  Status place_on_roofline(EvalReport& report);

  Compiler& compiler_;
  ReferenceWorker& worker_;
  ProcessRunner& runner_;
  EvalOptions options_;
  nlohmann::json loaded_;                  // last `load` answer
  nlohmann::json prepared_;                // last `prepare` answer (its buffers live in the worker)
  std::filesystem::path loaded_problem_;
};

// How many correctness trials fit in one prepare, from the worker's memory estimate (`load` answer's
// "memory"): the timing sets, parameters and the check's workspace come first. At least 1 (the
// worker refuses, with a clear error, a trial that does not fit at all). Pure, tested.
int trials_per_batch(const nlohmann::json& memory, int timing_sets);

// The factor the robustness trial scales inputs by: large enough to expose kernels that only work
// near [0,1), small enough that the reference stays finite in the problem's dtype.
double robustness_scale(const std::string& dtype);

// One line for a compile failure: how many errors, and the first with its candidate line.
std::string compile_failure_reason(const CompileOutcome& outcome);

// Chooses the verdict for a finished runner process from its exit and result file (pure, tested).
struct RunnerOutcome {
  Verdict verdict = Verdict::pass;
  std::string reason;
};
RunnerOutcome classify_runner(const ProcessResult& process, const nlohmann::json& result, int completed_trials_expected);

}  // namespace cutegen
