#pragma once
// `cutegen eval`: compile with the static checks, let the worker run the candidate in a sandboxed
// runner under its supervision (fresh inputs per call, audits, its own clock: docs/judge.md), time
// the baselines, place on the roofline. The verdict is one word plus the evidence.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/compiler.h"
#include "run/reference_worker.h"
#include "run/roofline.h"

namespace cutegen {

struct EvalOptions {
  std::string precision = "strict";  // strict | tf32 | bf16
  int trials = 5;                    // problem-input trials (the first with the problem's own parameters);
                                     // signed and scaled trials come on top
  int warmup = 10;
  int runs = 100;                    // timed calls, each on freshly staged inputs
  uint64_t seed = 0;                 // 0: fresh seeds, recorded in the report
  bool baselines = true;
  std::chrono::seconds runner_timeout{120};  // per call of the candidate
  std::filesystem::path runner;      // the cutegen-runner executable
  std::filesystem::path work_dir;    // per-evaluation directories (the runner's private one inside)
  std::filesystem::path cache_root;  // calibration and baseline caches
  std::string device = "cuda";       // the worker's device ("cpu" only in tests: the runner needs a GPU)
  // Test hook, never set by the tool: sent as `fake_runner`, which only a worker started with
  // CUTEGEN_WORKER_TEST_HOOKS=1 accepts (it then plays the runner itself; judge_worker_test.cpp).
  nlohmann::json fake_runner;
};

// Verdicts, in the order the judge finds them (docs/judge.md says what each guarantee checks).
enum class Verdict {
  pass,
  compile_error, rejected,                                                 // from the compile stage
  load_failed, kernel_error, cuda_error, crash, timeout, printed_output,   // the runner, as the worker saw it
  mismatch, unwritten, nondeterministic, input_mutated,                   // the checks
  hidden_work,                                                            // work outside the call or stream
  result_reuse,                                                           // an earlier call's answer
  forbidden_call,                                                         // the sandbox trapped a system call
  tampering,                                                              // the runner answered out of turn
};
std::string to_string(Verdict v);
std::optional<Verdict> parse_verdict(const std::string& word);

// Robust statistics of one sample of times.
struct TimeStats {
  double median_ms = 0, iqr_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
};

// The candidate's time as the worker measured it: per call, its own clock from command to reply,
// minus the round trip of an empty command, plus any overrun of the GPU past the call; the reported
// statistics are those of the slower input distribution (docs/judge.md, guarantee 1).
struct CandidateTime {
  TimeStats stats;
  std::string slower_kind;                     // "problem" or "signed"
  std::map<std::string, TimeStats> per_kind;
  double overhead_ms = 0;                      // the round trip subtracted from each call
  double overrun_ms = 0;                       // GPU time past the calls, charged to them (all calls)
  std::optional<double> event_median_ms;       // the runner's CUDA events: a hint, never the time
};

struct EvalReport {
  Verdict verdict = Verdict::pass;
  std::string reason;                 // one line
  std::string evidence;               // what the diagnose step reads (condensed)
  nlohmann::json problem;             // worker metadata
  CompileOutcome compile;
  nlohmann::json checks = nlohmann::json::array();  // the worker's full check reports (trials, audits)
  std::optional<CandidateTime> time;  // when the timed calls ran
  nlohmann::json session;             // the rest of the worker's record: runner, calibration, audits, calls
  nlohmann::json baselines;           // eager / compile stats
  std::optional<Floor> floor;
  std::string roofline_warning;       // the time beat the physical floor: the floor model is wrong
  std::vector<uint64_t> seeds;
  double seconds = 0;                 // wall time of the whole evaluation
  // Where that wall time went (compile, load, session, baselines, roofline): the harness's overhead
  // beyond the kernel's own runs, and what to speed up when eval feels slow.
  std::map<std::string, double> phase_seconds;

  bool passed() const { return verdict == Verdict::pass; }
  double median_ms() const { return time ? time->stats.median_ms : 0; }
  double iqr_ms() const { return time ? time->stats.iqr_ms : 0; }
  nlohmann::json to_json() const;
  std::string summary() const;        // the compact human view
};

class Judge {
 public:
  Judge(Compiler& compiler, ReferenceWorker& worker, EvalOptions options);
  // Error: the tool or the problem file failed (message says what to fix). A failing kernel is a report.
  Result<EvalReport> evaluate(const std::filesystem::path& problem, const std::string& kernel_source,
                              const std::string& kernel_name);
  // The problem without a candidate: metadata, live baselines (when enabled) and the roofline floor.
  // What the first prompt is built from.
  Result<EvalReport> describe(const std::filesystem::path& problem);

  // What a profiler wraps: a runner command that calls `library` `calls` times on one freshly staged
  // set of the problem's inputs (no checks, no warm-up, no L2 flush: ncu flushes caches itself). The
  // worker keeps those buffers until its next request that allocates, so run the command first.
  // Error: the worker cannot load or stage, or the job file cannot be written.
  struct RunnerInvocation {
    std::vector<std::string> argv;
    std::filesystem::path job, result;
  };
  Result<RunnerInvocation> profiling_run(const std::filesystem::path& problem, const std::filesystem::path& library,
                                         int calls);

 private:
  Result<nlohmann::json> load_problem(const std::filesystem::path& problem);
  Status run_session(const CompileOutcome& compiled, std::mt19937_64& rng, EvalReport& report);
  Status measure_baselines(EvalReport& report, uint64_t seed);
  Status place_on_roofline(EvalReport& report);
  Result<std::filesystem::path> fresh_work_dir(const std::string& what);

  Compiler& compiler_;
  ReferenceWorker& worker_;
  EvalOptions options_;
  nlohmann::json loaded_;                  // last `load` answer
  std::filesystem::path loaded_problem_;
};

// The trial plan: `problem_trials` on the problem's own inputs (the first with the problem's own
// parameters, the rest with fresh random ones), one signed and one scaled, in a random order. Pure.
nlohmann::json trial_plan(int problem_trials, const std::string& dtype, std::mt19937_64& rng,
                          std::vector<uint64_t>& seeds);

// The factor the robustness trial scales inputs by: large enough to expose kernels that only work
// near [0,1), small enough that the reference stays finite in the problem's dtype.
double robustness_scale(const std::string& dtype);

// One line for a compile failure: how many errors, and the first with its candidate line.
std::string compile_failure_reason(const CompileOutcome& outcome);

// Reads the worker's `evaluate_candidate` record into the report: verdict, reason, the evidence the
// diagnose step reads, checks, time. Error when the record is malformed (a worker bug). Pure, tested.
Status apply_session_record(const nlohmann::json& record, EvalReport& report);

// The evidence of one failing check report (the mismatch numbers, first bad elements, mutations).
std::string describe_check(const nlohmann::json& check);

}  // namespace cutegen
