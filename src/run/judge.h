#pragma once
// `cutegen eval`: compile with the static checks, let the worker run the candidate in a sandboxed
// runner under its supervision (fresh inputs per call, audits, its own clock: docs/judge.md), time
// the baselines, place on the roofline. The verdict is one word plus the evidence.
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"
#include "common/file_lock.h"
#include "compile/compiler.h"
#include "run/reference_worker.h"
#include "run/roofline.h"

namespace cutegen {

// Generalization trials a full evaluation runs by default (eval, bench, optimize; a screening runs none).
inline constexpr int kDefaultGeneralize = 2;
// Seconds of staging fresh inputs the timed calls may take unless the user fixed their number (--runs): the
// worker runs `runs` of them or as many as fit at the staging time it calibrated, at least 30. On an H100 a
// KernelBench-size call stages in 11-20 ms: 50 calls instead of 100, ~1.6 s less per evaluation.
inline constexpr double kDefaultTimedBudgetS = 0.8;
// The most kernels one screening group holds (the worker's screen_group.MAX_CANDIDATES): each is a runner process
// with its own CUDA context. screen_all sends more as several groups.
inline constexpr std::size_t kMaxScreeningGroup = 8;

struct EvalOptions {
  Precision precision = Precision::strict;
  int trials = 5;                    // problem-input trials (the first with the problem's own parameters);
                                     // signed and scaled trials come on top
  int warmup = 10;
  int runs = 100;                    // timed calls, each on freshly staged inputs (a most, under timed_budget_s)
  // The timed calls' staging budget (kDefaultTimedBudgetS); unset: `runs` exactly.
  std::optional<double> timed_budget_s = kDefaultTimedBudgetS;
  // On since the H200 judged every honest kernel of the suite with two (2026-12-06, benchmarks/results.md);
  // a few seconds per passing evaluation on a KernelBench-size problem. docs/judge.md, guarantee 9.
  int generalize = kDefaultGeneralize;  // generalization trials after a pass: other shapes of the problem
                                        // (docs/judge.md, guarantee 9); 0: none, only the problem's own is verified
  // The loop's bar, the time a kernel must beat to be kept: what only a kept kernel needs runs only for one
  // below it -- the generalization trials, and at the problem's own shape the scaled trial and the full audits
  // (a slower one is rolled back whatever they would show). Unset: always (`cutegen eval`, screenings).
  std::optional<double> keep_bar_ms;
  uint64_t seed = 0;                 // 0: fresh seeds, recorded in the report
  bool baselines = true;
  std::chrono::seconds runner_timeout{120};  // per call of the candidate
  std::filesystem::path runner;      // the cutegen-runner executable
  std::filesystem::path work_dir;    // per-evaluation directories (the runner's private one inside)
  std::filesystem::path cache_root;  // calibration and baseline caches
  std::string device = "cuda";       // the worker's device ("cpu" only in tests: the runner needs a GPU)
  // Held around everything that runs on the GPU (load, the runner session, baselines, calibration,
  // profiling setup) but not the compile, so tasks sharing a GPU (cutegen bench) never measure at
  // once while their compiles overlap. Null: no lock.
  DeviceLock* device_lock = nullptr;
  // Screening (`cutegen tune`): the cheaper settings screening_options() makes, to rank variants of
  // one kernel. A screened evaluation says so in its record ("screening": true) and its time is never
  // reported as a result: the variant chosen is evaluated again in full.
  bool screening = false;
  // A session the worker refused because the CPU was too busy to time on, or another program worked on the
  // GPU (docs/judge.md), is run again after each of these pauses; after the last, the evaluation fails with
  // the worker's line.
  std::vector<std::chrono::seconds> busy_retry_pauses{std::chrono::seconds(10), std::chrono::seconds(30)};
  // Told before each of those pauses (the worker's line, the pause, which attempt comes next), so a
  // user watching a long evaluation sees why it is waiting. Null: nothing is said.
  std::function<void(const std::string&)> on_busy_retry;
  // Test hook, never set by the tool: sent as `fake_runner`, which only a worker started through
  // python/tests/fake_runner_worker.py accepts (it then plays the runner itself; judge_worker_test.cpp). An
  // array: one spec per source of screen_all, in order.
  nlohmann::json fake_runner;
};

// `full` with one problem trial, a short warm-up, a fifth of the timed calls (at least 10), no
// baselines and no generalization trials: what ranking variants needs. The signed and scaled trials and
// the audits stay. Pure.
EvalOptions screening_options(EvalOptions full);

// A kernel that did not compile (or was rejected by the static checks) as the judge records it: the
// verdict, the first reason and the compiler's feedback as evidence. Shared with the loop's compile of
// a step's candidates, so their failures read as the judge's own would.
void record_compile_failure(const CompileOutcome& compiled, Evaluation& e);

// The judge's full report: the evaluation record (common/evaluation.h), which the loop, the prompts,
// the profile summary and the reports read, plus the judge's own account of how it got there.
struct EvalReport : Evaluation {
  CompileOutcome compile;
  nlohmann::json checks = nlohmann::json::array();  // the worker's full check reports (trials, audits)
  nlohmann::json session;             // the rest of the worker's record: runner, calibration, audits, calls
  std::vector<uint64_t> seeds;
  double seconds = 0;                 // wall time of the whole evaluation
  // Where that wall time went (compile, load, session, baselines, roofline): the harness's overhead
  // beyond the kernel's own runs, and what to speed up when eval feels slow.
  std::map<std::string, double> phase_seconds;
  bool screened = false;              // judged under screening settings (EvalOptions::screening)

  // The record with the judge's account in `details`: what the loop keeps and eval.json holds.
  Evaluation record() const;
  nlohmann::json to_json() const { return record().to_json(); }
  std::string summary() const;        // the compact human view
};

class Judge {
 public:
  Judge(Compiler& compiler, ReferenceWorker& worker, EvalOptions options);
  // Error: the tool or the problem file failed (message says what to fix). A failing kernel is a report.
  // `defines`: a variant of the kernel's knobs (-DNAME=VALUE, tune/knobs.h).
  Result<EvalReport> evaluate(const std::filesystem::path& problem, const std::string& kernel_source,
                              const std::string& kernel_name, const std::vector<Define>& defines = {});
  // evaluate() for the loop: what only a kept kernel needs (other shapes, the scaled trial, the full audits) only
  // for a kernel faster than `bar_ms`, the time it must beat to be kept (EvalOptions::keep_bar_ms); the record
  // says when they were skipped.
  Result<EvalReport> evaluate_below(const std::filesystem::path& problem, const std::string& kernel_source,
                                    const std::string& kernel_name, double bar_ms);
  // evaluate() under screening_options(this judge's options): one variant's rank, not a result (screen_all of one).
  Result<EvalReport> screen(const std::filesystem::path& problem, const std::string& kernel_source,
                            const std::string& kernel_name, const std::vector<Define>& defines);
  // Several kernels of one problem screened together (`cutegen optimize --candidates`): one report per source, in
  // order, each under screening_options. Those that compile share one worker session (`screen_candidates`: one
  // runner each, one calibration, each call's inputs staged once; the workspace kernels' sizes asked first); a
  // kernel whose exports cannot be read here is screened alone as screen() does, and so is a lone one.
  // Also `cutegen tune`'s variants (the same source under other defines).
  Result<std::vector<EvalReport>> screen_all(const std::filesystem::path& problem,
                                             const std::vector<CompileRequest>& kernels);
  // The problem without a candidate: metadata, live baselines (when enabled) and the roofline floor.
  // What the first prompt is built from.
  Result<EvalReport> describe(const std::filesystem::path& problem);

  // What a profiler wraps: a runner command that calls the library of `passed` (an evaluation that
  // passed) `calls` times on one freshly staged set of the problem's inputs, with the workspace that
  // evaluation recorded (no checks, no warm-up, no L2 flush: ncu flushes caches itself). The worker
  // keeps those buffers until its next request that allocates, so run the command first.
  // Error: the worker cannot load or stage, or the job file cannot be written.
  struct RunnerInvocation {
    std::vector<std::string> argv;
    std::filesystem::path job, result;
  };
  Result<RunnerInvocation> profiling_run(const std::filesystem::path& problem, const Evaluation& passed, int calls);
  // Gives the worker's device memory back (`release_gpu`) and forgets the loaded problem: what the judge
  // does itself at the end of every evaluation on a shared GPU, for callers that held the GPU around
  // profiling_run (its buffers stay until then). Call it while still holding the device lock.
  Status give_back_gpu();

 // The sessions the worker refused for a busy machine before one ran (with_busy_retries).
  struct BusyRetries {
    int retries = 0;
    nlohmann::json reasons = nlohmann::json::array();  // the worker's line for each refused attempt
  };

 private:
  Result<ProblemFacts> load_problem(const std::filesystem::path& problem);
  Status run_session(const CompileOutcome& compiled, std::mt19937_64& rng, EvalReport& report);
  Result<std::vector<EvalReport>> screen_all_now(const std::filesystem::path& problem,
                                                 const std::vector<CompileRequest>& kernels);
  Status run_group(const std::filesystem::path& problem, const std::vector<CompileOutcome>& built,
                   const std::vector<bool>& workspace, const std::vector<std::size_t>& grouped,
                   std::vector<EvalReport>& reports);
  // The fields of a worker session's request that come from the options (evaluate_candidate, screen_candidates).
  nlohmann::json session_request(const nlohmann::json& trials, const std::filesystem::path& dir) const;
  // How long the worker may take for a session of `candidates` kernels with `trials` correctness trials.
  std::chrono::seconds session_limit(std::size_t trials, std::size_t candidates) const;
  // Runs `attempt` (a whole fresh session each time) until the worker does not refuse it for a busy machine,
  // pausing options_.busy_retry_pauses between; `busy` says how often it was refused and why.
  Result<nlohmann::json> with_busy_retries(const std::function<Result<nlohmann::json>()>& attempt, BusyRetries& busy);
  Status measure_baselines(EvalReport& report, uint64_t seed);
  Status place_on_roofline(EvalReport& report);
  Result<std::filesystem::path> fresh_work_dir(const std::string& what);
  // Runs `body` holding the GPU (options_.device_lock); when that GPU is shared, gives the worker's
  // device memory back (`release_gpu`) before letting go of it.
  template <class Body>
  auto on_gpu(Body&& body) -> decltype(body());

  Compiler& compiler_;
  ReferenceWorker& worker_;
  EvalOptions options_;
  std::optional<ProblemFacts> loaded_;     // last `load` answer
  std::filesystem::path loaded_problem_;
  // The workspace each library asked for at a problem's shapes in a session of this judge (a screening group's, a
  // screen's, an evaluation's), by problem and compile key: the next session of that library maps it from the start
  // instead of starting a runner that only asks, and the worker holds the kernel to the same size at load
  // (docs/worker-protocol.md, `workspace_bytes`).
  std::map<std::string, uint64_t> workspace_asked_;
  // Per problem, the size the last library with a workspace asked for: sent to the next library that exports the
  // pair as a guess (`workspace_guess_bytes`), since a step rarely changes it. Never a check: the worker maps it
  // only until the kernel asks for another.
  std::map<std::string, uint64_t> workspace_last_;
  std::string workspace_asked_key(const std::string& compile_key) const;
  void remember_workspace(const EvalReport& report);
};

// The trial plan: `problem_trials` on the problem's own inputs (the first with the problem's own
// parameters, the rest with fresh random ones), one signed and one scaled unless `robustness` is false (a
// screening group), in a random order. Pure.
nlohmann::json trial_plan(int problem_trials, const std::string& dtype, std::mt19937_64& rng,
                          std::vector<uint64_t>& seeds, bool robustness = true);

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

// The summary's line on the generalization trials: the shapes verified, those the kernel refused, the cost.
std::string shapes_line(const Generalization& g);

}  // namespace cutegen
