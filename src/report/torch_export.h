#pragma once
// The winning kernel as something a PyTorch user can drop in:
//   <op>_op.py    loads kernel.so with ctypes and registers torch.ops.cutegen.<op> (CUDA kernel plus a
//                 fake implementation, so torch.compile can trace through it);
//   model_new.py  a KernelBench-style ModelNew that builds the reference Model for its parameters
//                 and buffers and runs the op instead of Model.forward.
// Both are generated from the problem's facts (common/evaluation.h), so they know the shapes and dtypes
// the kernel was verified on and refuse anything else instead of running the kernel out of its contract.
#include <string>

#include "common/evaluation.h"
#include "common/result.h"

namespace cutegen {

struct TorchExport {
  std::string op_name;       // e.g. "relu"; the op is torch.ops.cutegen.<op_name>
  std::string op_module;     // text of <op_name>_op.py
  std::string model_new;     // text of model_new.py
};

// `problem_file`: the file name the ModelNew module imports the reference from (copied next to it).
Result<TorchExport> make_torch_export(const ProblemFacts& problem, const std::string& problem_file);

// A valid Python identifier from a problem name ("19_ReLU" -> "p19_relu").
std::string op_identifier(const std::string& name);

}  // namespace cutegen
