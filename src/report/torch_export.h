#pragma once
// The winning kernel as a torch op over the judged library (`cutegen export --format op`, best/):
//   <op>_op.py    loads kernel.so (beside it) with ctypes and registers torch.ops.cutegen.<op> (CUDA
//                 kernel plus a fake implementation, so torch.compile can trace through it).
// Generated from the problem's facts (common/evaluation.h), so it knows the shapes and dtypes the kernel
// was verified on and refuses anything else instead of running the kernel out of its contract. The
// self-contained exports are kernelbench_export.h (one file for KernelBench) and op_package.h (a package
// that builds the kernel from source at install).
#include <string>

#include "common/evaluation.h"
#include "common/result.h"

namespace cutegen {

struct TorchExport {
  std::string op_name;       // e.g. "relu"; the op is torch.ops.cutegen.<op_name>
  std::string op_module;     // text of <op_name>_op.py
};

Result<TorchExport> make_torch_export(const ProblemFacts& problem);

// A valid Python identifier from a problem name ("19_ReLU" -> "p19_relu").
std::string op_identifier(const std::string& name);

}  // namespace cutegen
