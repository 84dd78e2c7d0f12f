#pragma once
// What the agent loop hands the prompt builders: plain data, filled by the loop from the evaluation
// record (common/evaluation.h: the problem's facts, verdicts, the precision policy) and the step
// history (common/step_record.h). Independent of the judge's headers (no EvalReport, no JSON) so
// prompts can be built and tested from literals; the loop owns the mapping, type to type.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/evaluation.h"
#include "common/result.h"
#include "common/step_record.h"

namespace cutegen {

// WorkloadClass (common/evaluation.h) chooses the optimisation menu (prompts/menu_<class>.md); with the
// aten ops, the dtype and the precision policy it chooses the library kernel shown at synthesis
// (example_choice.h).

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
  std::string reference_source;       // the problem .py file, verbatim (shown by problem_source_for_prompt)
  WorkloadClass workload = WorkloadClass::other;
  std::vector<std::string> aten_ops;  // what forward() runs ("aten::_softmax"): picks the library example
  std::string dtype;                  // the least precise floating dtype; "" = derive from the tensors
  std::vector<TensorBrief> inputs;    // cutegen_forward's order: forward() args, then parameters, then buffers
  std::vector<TensorBrief> outputs;
  std::vector<ValueFacts> init_inputs;  // Model's constructor arguments (then the defaults it leaves out)
  Precision precision = Precision::strict;
  std::string gpu;                    // e.g. "NVIDIA H200"
  std::string arch;                   // what the run compiles for, e.g. "sm_90a"
  int other_shapes = 0;               // the judge's generalization trials after a pass (--generalize)
  uint64_t min_bytes = 0;             // bytes that must move (read + written), from the roofline model
  uint64_t flops = 0;                 // FLOPs that must be done
  std::optional<double> floor_ms;     // roofline floor on this GPU
  std::string floor_bound;            // "memory" or "compute" (which term sets the floor)
  std::optional<double> eager_ms;     // baselines, timed live on the same GPU
  std::optional<double> compile_ms;   // torch.compile
};

// Why a candidate failed, in the judge's words. The loop maps verdicts onto kinds:
// compile_error -> compile_error; rejected -> rejected; load_failed, kernel_error, cuda_error, crash,
// timeout, printed_output, hidden_work, forbidden_call, tampering, host_compute -> runtime_error; mismatch, unwritten,
// nondeterministic, input_mutated, result_reuse, shape_specific (wrong or failing at another shape) -> wrong_result.
enum class FailureKind { compile_error, rejected, runtime_error, wrong_result };
std::string_view to_string(FailureKind k);
// The mapping above; "pass" is an error (it is no failure).
Result<FailureKind> failure_kind_for_verdict(Verdict verdict);

struct FailureEvidence {
  FailureKind kind = FailureKind::compile_error;
  Verdict verdict = Verdict::compile_error;
  std::string reason;    // one line
  std::string details;   // condensed evidence (diagnostics, mismatch report); clipped when very long
};

// StepRecord (common/step_record.h) is one line of history: what was tried and how it ended.

// ---- the inputs of each prompt ----------------------------------------------------------------------

struct SynthesisInput {
  ProblemBrief problem;
};

struct DiagnoseInput {
  ProblemBrief problem;
  std::string kernel;                // the failing kernel source
  FailureEvidence failure;
  std::string change_under_repair;   // "" at synthesis; else the optimisation that broke the kernel
  std::string change_diff;           // with it: a unified diff from the last correct kernel to this one
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
  std::vector<StepRecord> history;   // every optimisation step so far; the formatter bounds it
  std::string profile_summary;       // "" while profiling is withheld (delayed-profiling policy)
  // ptxas's performance-loss notes on the best kernel's build (serialised wgmma): shown whatever the
  // profiling policy, since no profile says why each wgmma waits for the one before.
  std::vector<std::string> compiler_notes;
};

// One request of a step with several candidates: which menu item it applies, which the others take.
struct CandidateShareInput {
  int candidate = 1;                  // 1-based
  int candidates = 1;
  std::string item;                   // "3. Enough bytes in flight per SM"
  std::string item_text;              // its full text; "" when the optimize request above shows it already
  std::vector<std::string> siblings;  // the other requests' items, in candidate order
};

struct RestartInput {
  ProblemBrief problem;
  std::string why;                   // one line: why the loop gave up on the previous kernel
  std::vector<StepRecord> failures;  // kind synthesis: what the earlier attempts tried and how each ended
  std::optional<FailureEvidence> last_failure;
};

}  // namespace cutegen
