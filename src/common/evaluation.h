#pragma once
// The evaluation record: what the judge found about one kernel (or, without a kernel, about the
// problem), as types. The judge produces it (run/judge.h's EvalReport is this record plus the judge's
// own account), and the loop, the prompter, the profile summary and the reports read its fields, so
// renaming one is a compile error in every consumer instead of a key that silently reads as empty.
// JSON only at the edges: the worker's answers are parsed into it (`*_from_json`), and the journal,
// run files and `--json` write it (`to_json`); the two share one layout.
//
// It lives in common because every stage that reads it links common and nothing else it needs:
// the prompt and profile stages stay free of the judge's headers (ARCHITECTURE.md, "The evaluation
// record").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cutegen {

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
  host_compute,                                                           // the host did the work (CPU time)
  shape_specific,                                                         // right at the problem's shape only
};
inline constexpr Verdict kLastVerdict = Verdict::shape_specific;
std::string to_string(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view word);

// The precision policy a kernel is judged under (docs/judge.md, guarantee 4). The one list of policies
// and the one default: options, records and the baselines take their words from here, and the worker's
// copy (python/cutegen_worker/compare.py, POLICIES and DEFAULT_PRECISION) is tied to it by
// python/tests/test_precision_lists.py.
enum class Precision { strict, tf32, bf16 };
inline constexpr Precision kDefaultPrecision = Precision::strict;
std::string to_string(Precision p);
Result<Precision> parse_precision(std::string_view word);  // error names the choices
const std::vector<Precision>& all_precisions();
std::vector<std::string> precision_names();  // in all_precisions()'s order, for option checks

// Chooses the optimisation menu and the example kernel; the worker derives it from the aten ops.
enum class WorkloadClass { gemm, elementwise, reduction, conv, attention, other };
std::string_view to_string(WorkloadClass c);
Result<WorkloadClass> parse_workload_class(std::string_view name);  // error lists the names
// A JSON object of seconds by name (a phase clock, a time per mode); the error names `what`.KEY that is not a number.
Result<std::map<std::string, double>> seconds_by_name(const nlohmann::json& j, std::string_view what);
const std::vector<WorkloadClass>& all_workload_classes();

// One input, parameter, buffer, output or constructor argument, as the worker describes it.
struct ValueFacts {
  enum class Kind { tensor, scalar, other };  // other: a Python value of get_init_inputs() (a tuple, a string)
  std::string name;             // "" for outputs and unnamed values
  Kind kind = Kind::tensor;
  std::string dtype;            // torch spelling ("float32", "int64", "bool"); "" for other
  std::vector<int64_t> shape;   // tensors; empty for rank 0
  std::string value;            // scalars and other values, as text ("0.5", "8192", "(64, 256)")
  bool buffer = false;          // params: a registered buffer, not a parameter
  bool is_default = false;      // init_inputs: a constructor default that get_init_inputs() leaves out

  nlohmann::json to_json() const;
  static Result<ValueFacts> from_json(const nlohmann::json& j);
};

// The problem as the worker loaded it (its `load` answer, docs/worker-protocol.md).
struct ProblemFacts {
  std::string name;
  WorkloadClass workload_class = WorkloadClass::other;
  std::string dtype = "float32";        // the problem's least precise floating dtype
  std::string reference_dtype;          // what the reference is computed in
  std::string gpu;
  std::string torch_version;
  uint64_t flops = 0;                   // FLOPs that must be done
  uint64_t min_bytes = 0;               // bytes that must move (read + written)
  std::vector<ValueFacts> inputs;       // forward() arguments
  std::vector<ValueFacts> params;       // named_parameters(), then named_buffers()
  std::vector<ValueFacts> outputs;
  std::vector<ValueFacts> init_inputs;  // Model's constructor arguments, then the defaults it leaves out
  std::vector<std::string> aten_ops;
  std::string reference_note;           // why the reference is not upcast, when it is not

  nlohmann::json to_json() const;
  static Result<ProblemFacts> from_json(const nlohmann::json& j);
};

// Robust statistics of one sample of times.
struct TimeStats {
  double median_ms = 0, iqr_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
  // Baselines: timed runs left out because the worker waited for a CPU inside them (a busy machine;
  // python/cutegen_worker/cpu_wait.py). The statistics are those of the other runs.
  int disturbed_runs = 0;

  nlohmann::json to_json() const;
  static Result<TimeStats> from_json(const nlohmann::json& j);  // median_ms required
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
  std::optional<double> span_median_ms;        // the worker's GPU marks around each call, less a ping's:
                                               // evidence beside the time (docs/judge.md, guarantee 1)
  int disturbed_calls = 0;                     // calls in which the worker or runner waited for a CPU:
                                               // counted in the time, not taken as evidence of hidden work

  nlohmann::json to_json() const;
  static Result<CandidateTime> from_json(const nlohmann::json& j);
};

// One PyTorch baseline timed live on the same GPU: its statistics, or why it could not be timed
// (torch.compile failing on a model, say).
struct BaselineTime {
  std::optional<TimeStats> stats;
  std::string error;

  std::optional<double> median_ms() const { return stats ? std::optional<double>(stats->median_ms) : std::nullopt; }
};

struct Baselines {
  std::optional<BaselineTime> eager, compile;  // absent: not measured
  bool cached = false;                         // every mode came from the baseline cache
  // Wall time per mode measured now (not served from the cache); "compile" includes torch.compile's own
  // compile and its first, autotuning, run.
  std::map<std::string, double> seconds;

  bool empty() const { return !eager && !compile; }
  nlohmann::json to_json() const;
  static Result<Baselines> from_json(const nlohmann::json& j);
};

// The physical floor of the problem on this GPU (run/roofline.h computes it).
struct Floor {
  double memory_ms = 0;
  double compute_ms = 0;
  double floor_ms = 0;
  std::string bound;    // "memory" or "compute"
  std::string rate;     // which matmul rate applied: fp32, tf32, fp16, bf16
  double hbm_gbps = 0;  // the calibrated bandwidth behind memory_ms (profiles compare DRAM use with it)

  nlohmann::json to_json() const;
  static Result<Floor> from_json(const nlohmann::json& j);
};

// One shape a kernel was run at and found right (docs/judge.md, guarantee 9): the problem's own, or another
// configuration of it. What an export may call the kernel on: the shapes of the forward() arguments.
struct VerifiedShape {
  std::map<std::string, int64_t> config;                     // the problem's shape globals, their values here
  std::vector<std::optional<std::vector<int64_t>>> inputs;   // each forward() argument's shape; none: a Python scalar
  std::vector<std::vector<int64_t>> outputs;

  nlohmann::json to_json() const;
  static Result<VerifiedShape> from_json(const nlohmann::json& j);
};

// How one generalization trial ended. pass: right there (the shape is verified); refused: the kernel declined
// the shape as the contract lets it (not verified, not wrong); mismatch: wrong results there; crash: the call
// failed otherwise. The last two make the verdict shape_specific (or the hostile verdict the trial gave).
enum class ShapeOutcome { pass, refused, mismatch, crash };
std::string to_string(ShapeOutcome o);

struct ShapeTrial {
  std::string kind;                                          // smaller, larger, batch_one
  std::map<std::string, int64_t> config;
  std::vector<std::optional<std::vector<int64_t>>> inputs;
  std::vector<std::vector<int64_t>> outputs;
  ShapeOutcome outcome = ShapeOutcome::pass;
  Verdict verdict = Verdict::pass;                           // the trial session's own verdict
  std::string reason;
  double seconds = 0;

  nlohmann::json to_json() const;
  static Result<ShapeTrial> from_json(const nlohmann::json& j);
};

// The generalization trials after a kernel passed at the problem's own shape (the worker's `generalization`
// record): which globals varied, each trial, and the shapes verified -- the problem's own first.
struct Generalization {
  int asked = 0;                        // trials asked for (--generalize)
  std::vector<std::string> varied;      // the globals varied; empty: the problem has no other shape to try
  std::vector<ShapeTrial> trials;
  std::vector<VerifiedShape> verified;
  std::vector<std::string> notes;       // why fewer trials ran than were asked for
  double seconds = 0;                   // the trials' wall time
  // Set when none ran because the kernel's time was not below the loop's bar (EvalOptions::keep_bar_ms):
  // a kernel that slow is rolled back, never kept or exported, so its other shapes needed no trial.
  std::optional<double> skipped_bar_ms;

  int refused() const;
  // "batch_size=13, dim=9001": what `config` sets to other values than the problem's own (verified[0]).
  std::string changes(const std::map<std::string, int64_t>& config) const;
  // "the problem's own; batch_size=13, dim=9001; batch_size=4105": the shapes verified, for people.
  std::string verified_text() const;
  nlohmann::json to_json() const;
  static Result<Generalization> from_json(const nlohmann::json& j);
};

struct Evaluation {
  Verdict verdict = Verdict::pass;
  std::string reason;                   // one line
  std::string evidence;                 // what the diagnose step reads (condensed)
  Precision precision = Precision::strict;
  std::optional<ProblemFacts> problem;  // absent when the kernel failed before the problem was loaded
  std::optional<CandidateTime> time;    // when the timed calls ran
  Baselines baselines;
  std::optional<Floor> floor;
  std::string roofline_warning;         // the time beat the physical floor: the floor model is wrong, no SOL
  std::string library;                  // the built kernel library, when it compiled
  std::string compile_key;              // the compile key it was built under
  uint64_t workspace_bytes = 0;         // the workspace the kernel asked for (contract v2); 0: none
  // ptxas's performance-loss notes on the kernel's build (CompileOutcome::performance_warnings: serialised
  // wgmma above all), for the summary and the optimize request.
  std::vector<std::string> compiler_notes;
  // The kernel at other shapes of the problem, once it passed at its own; absent when it did not (and in
  // records from before the trials). Its `verified` list is what an export may call the kernel on.
  std::optional<Generalization> generalization;
  // Set when the checks at the problem's own shape that only a kept kernel needs -- the scaled trial, the full
  // audits of two timed calls -- did not run: its time was not below this bar, the loop's (EvalOptions::keep_bar_ms),
  // so it is rolled back whatever they would show. Every other trial ran, and every timed call was compared.
  std::optional<double> skipped_checks_bar_ms;
  // The judge's own account for people reading eval.json (compile log, every check, the session,
  // seeds, phase times). Written beside the typed fields and carried through the journal; no code
  // reads it.
  nlohmann::json details = nlohmann::json::object();

  bool passed() const { return verdict == Verdict::pass; }
  double median_ms() const { return time ? time->stats.median_ms : 0; }
  double noise_ms() const { return time ? time->stats.iqr_ms : 0; }  // the spread an improvement must beat
  std::optional<double> speedup_eager() const { return speedup_over(baselines.eager); }
  std::optional<double> speedup_compile() const { return speedup_over(baselines.compile); }
  std::optional<double> sol_pct() const;  // floor / time, unless the time beat the floor
  // "mismatch: trial 3 (scaled inputs) failed: mismatch": the verdict and the reason's first line, for
  // one-line messages that say why a kernel failed (a run's last line, a suite's task line).
  std::string verdict_line() const;

  // One object: the typed fields, the derived `speedup` and `sol_pct`, and the keys of `details`.
  nlohmann::json to_json() const;
  // Reads what to_json wrote; keys it does not type become `details`. Error: a field is missing or
  // has the wrong type (a damaged run log, a worker bug).
  static Result<Evaluation> from_json(const nlohmann::json& j);

 private:
  std::optional<double> speedup_over(const std::optional<BaselineTime>& b) const;
};

}  // namespace cutegen
