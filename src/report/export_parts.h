#pragma once
// What the self-contained exports share (docs/export.md): the KernelBench file (kernelbench_export.h)
// and the installable op package (op_package.h) both carry the kernel's source, the contract header and
// one torch binding, build them the way the judge built the kernel, and run the kernel only for the
// calls it was verified for.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/evaluation.h"
#include "common/result.h"
#include "compile/compile_options.h"

namespace cutegen {

// How the judge built the kernel; the exports build it the same way.
struct KernelBuild {
  std::string arch = "sm_90a";
  std::string cpp_std = "c++17";
  std::vector<std::string> flags;  // the compile options' flags, then extra_flags
  std::string contract_header;     // the text of cutegen/kernel.h
  std::string cutlass_version;     // of the headers it was judged with, "4.2.0"
};
// From the compile options, with the contract header and the CUTLASS version read where the judge reads them.
Result<KernelBuild> kernel_build_from(const CompileOptions& options);

// Everything an export is made of.
struct ExportSource {
  std::string kernel_source;
  std::string problem_source;  // the problem file's text
  ProblemFacts problem;        // names and the call it was verified for
  // One line saying who verified the kernel: "cutegen 0.9 judged it: pass, 3.41 ms median, strict
  // precision, on NVIDIA H200", or for a kernel exported without a record, that nobody did here.
  std::string verified_by;
  KernelBuild build;
  // Shapes the judge's generalization trials verified beyond the problem's own (Evaluation::generalization,
  // docs/judge.md guarantee 9): each one more entry of VERIFIED_CALLS.
  std::vector<VerifiedShape> other_shapes;
};

// The shapes an evaluation's generalization trials verified beyond the problem's own (its first), or none.
std::vector<VerifiedShape> other_verified_shapes(const Evaluation& evaluation);

// The `verified_by` line of a kernel the judge passed: verdict, precision, time, GPU and baselines.
std::string verified_by_line(const Evaluation& evaluation);

// One call of the kernel as the exports list it: forward()'s arguments, then the parameters and
// buffers (the contract's order), and the outputs. The verified set is a list so that a judge that
// verifies more shapes than the problem's own widens it without changing the exports.
struct VerifiedCall {
  std::vector<ValueFacts> args;
  std::vector<ValueFacts> outputs;
};
// The problem's own call first, then one per shape in `other_shapes` (tensor arguments and outputs of those
// shapes; parameters, scalars and dtypes as the problem's: the trials vary no model-sizing global). Error: a
// shape whose lists do not line up with the problem's call.
Result<std::vector<VerifiedCall>> verified_calls(const ProblemFacts& problem,
                                                 const std::vector<VerifiedShape>& other_shapes = {});

// The list as a Python literal:
//   [{"args": [("tensor", (8, 16), "float32"), ("scalar", "float", 0.5)], "outputs": [((8, 16), "float32")]}]
// Error: a value the contract cannot describe (an unknown dtype, an output that is not a tensor).
Result<std::string> python_verified_calls(const std::vector<VerifiedCall>& calls);
// The list of an export's source: its problem's own call and its other verified shapes.
Result<std::string> python_verified_calls(const ExportSource& source);

// The nvcc flags of the exports' builds, as a Python list literal: the judge's target, standard and
// flags, CUTLASS's direct driver calls, and the undoing of torch's half-precision operator bans (the
// judge's build has none, so a kernel may use __half arithmetic).
std::string python_nvcc_flags(const KernelBuild& build);

// "sm_90a" -> "(9, 0)": the compute capability the kernel runs on.
Result<std::string> python_capability(const std::string& arch);

// The names of the parameters and buffers, in the contract's order, as a Python list literal.
std::string python_state_names(const ProblemFacts& problem);

// Substitutes every {{KEY}} of `text` in one pass (values are not searched again). Error: a key
// without a value, or a value never used (a template and its caller out of step).
Result<std::string> fill_template(std::string_view text, const std::map<std::string, std::string>& values);

// The torch binding both exports compile beside the kernel (torch/extension.h + pybind11): the
// arguments and preallocated outputs as the contract's descriptors, the workspace of a v2 kernel from
// torch's allocator on the current stream, the kernel's return code as a RuntimeError.
extern const char* const kTorchBindingSource;

// Python shared by both exports: finding the CUTLASS headers, describing a call and matching it
// against VERIFIED_CALLS, checking the device, running the kernel, comparing constructor arguments.
// Expects _OP, _ARCH, _CAPABILITY, VERIFIED_CALLS, Model and get_init_inputs in its module.
extern const char* const kExportPythonHelpers;

}  // namespace cutegen
