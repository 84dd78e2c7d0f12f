#pragma once
// What the agent loop hands the prompt builders: plain data, filled by the loop from the reference
// worker's metadata and the judge's reports. Deliberately independent of the judge's headers (no
// nlohmann::json, no EvalReport) so prompts can be built and tested from literals, and so a change in
// how the judge reports does not ripple into the prompt texts; the loop owns the mapping.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cutegen {

// Chooses the optimisation menu (prompts/menu_<class>.md) and the example kernel shown at synthesis.
enum class WorkloadClass { gemm, elementwise, reduction, conv, attention, other };
std::string_view to_string(WorkloadClass c);
Result<WorkloadClass> parse_workload_class(std::string_view name);  // "gemm", ...; error lists the names
const std::vector<WorkloadClass>& all_workload_classes();

enum class TensorRole {
  forward_input,  // an argument of forward() that is a tensor
  host_scalar,    // an argument of forward() that is a Python int/float/bool (rank 0, value on the host)
  parameter,      // the model's named_parameters(), after the forward() arguments
  buffer,         // the model's named_buffers(), after the parameters
  output,
};
std::string_view to_string(TensorRole r);

struct TensorBrief {
  std::string name;             // "x", "weight", "running_mean"; "" for outputs without a name
  TensorRole role = TensorRole::forward_input;
  std::vector<int64_t> shape;   // empty for rank 0
  std::string dtype;            // torch spelling: "float32", "float16", "int64", ...
  std::string value;            // host scalars only: the value as text, e.g. "0.5"
};

// Everything the synthesis prompt says about the problem; the other prompts reuse parts of it.
struct ProblemBrief {
  std::string name;                   // e.g. "19_ReLU"
  std::string reference_source;       // the problem .py file, verbatim
  WorkloadClass workload = WorkloadClass::other;
  std::vector<TensorBrief> inputs;    // cutegen_forward's order: forward() args, then parameters, then buffers
  std::vector<TensorBrief> outputs;
  std::string init_inputs;            // get_init_inputs() as text, "" when it has none
  std::string precision = "strict";   // strict | tf32 | bf16
  std::string gpu;                    // e.g. "NVIDIA H200 (sm_90a)"
  uint64_t min_bytes = 0;             // bytes that must move (read + written), from the roofline model
  uint64_t flops = 0;                 // FLOPs that must be done
  std::optional<double> floor_ms;     // roofline floor on this GPU
  std::string floor_bound;            // "memory" or "compute" (which term sets the floor)
  std::optional<double> eager_ms;     // baselines, timed live on the same GPU
  std::optional<double> compile_ms;   // torch.compile
};

// Why a candidate failed, in the judge's words. The loop maps verdicts onto kinds:
// compile_error -> compile_error; rejected -> rejected; load_failed, kernel_error, cuda_error, crash,
// timeout, printed_output, hidden_work, forbidden_call, tampering -> runtime_error; mismatch, unwritten,
// nondeterministic, input_mutated, result_reuse -> wrong_result.
enum class FailureKind { compile_error, rejected, runtime_error, wrong_result };
std::string_view to_string(FailureKind k);
// The mapping above, for the judge's verdict words; "pass" and unknown words are errors.
Result<FailureKind> failure_kind_for_verdict(std::string_view verdict);

struct FailureEvidence {
  FailureKind kind = FailureKind::compile_error;
  std::string verdict;   // the judge's word, e.g. "mismatch", "nondeterministic"
  std::string reason;    // one line
  std::string details;   // condensed evidence (diagnostics, mismatch report); clipped when very long
};

// How one step of the loop (an optimisation, a repair attempt, a synthesis) ended.
enum class StepOutcome {
  improved,       // correct and faster than the best before it: kept
  not_faster,     // correct but not faster: rolled back
  compile_error,  // rolled back (or sent to repair)
  rejected,       // failed the static checks (forbidden symbol, no CuTe, ...)
  runtime_error,  // crash, timeout, CUDA error
  wrong_result,   // mismatch, unwritten output, nondeterminism, input mutation
  bad_answer,     // the answer could not be parsed or its edits did not apply
};
std::string_view to_string(StepOutcome o);

// One line of history. Keep `idea` and `detail` short; the formatter clips them anyway.
struct StepRecord {
  int n = 0;                      // step number as the loop counts them
  std::string idea;               // what was tried: "3xTF32 tensor-core MMA 16x8x8", "fix k-loop bound"
  StepOutcome outcome = StepOutcome::improved;
  std::optional<double> time_ms;  // median time when the kernel ran correctly
  std::optional<double> speedup;  // best time before this step / this time (> 1 is faster)
  std::string detail;             // optional: "max abs err 3.1e-2", "ptxas: uses 255 registers"
};

// ---- the inputs of each prompt ----------------------------------------------------------------------

struct SynthesisInput {
  ProblemBrief problem;
};

struct DiagnoseInput {
  ProblemBrief problem;
  std::string kernel;                // the failing kernel source
  FailureEvidence failure;
  std::string change_under_repair;   // "" at synthesis; else the optimisation that broke the kernel
  std::vector<StepRecord> attempts;  // earlier repair attempts on this failure (what was tried, how it ended)
};

struct RepairInput {
  ProblemBrief problem;
  std::string kernel;
  FailureEvidence failure;
  std::string diagnosis;             // the diagnose step's findings (DiagnosisAnswer::summary())
  std::vector<StepRecord> attempts;
};

struct OptimizeInput {
  ProblemBrief problem;
  std::string kernel;                // the current best kernel
  double best_ms = 0;                // its median time
  int step = 0;                      // this step's number, and the budget
  int max_steps = 0;
  std::vector<StepRecord> history;   // every optimisation step so far; the builder bounds it
  std::string profile_summary;       // "" while profiling is withheld (delayed-profiling policy)
};

struct RestartInput {
  ProblemBrief problem;
  std::string why;                   // one line: why the loop gave up on the previous kernel
  std::vector<StepRecord> failures;  // what the earlier attempts tried and how each ended
  std::optional<FailureEvidence> last_failure;
};

}  // namespace cutegen
