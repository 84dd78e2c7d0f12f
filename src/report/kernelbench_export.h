#pragma once
// The KernelBench submission (docs/export.md): ONE Python file, model_new.py, that KernelBench's
// eval_kernel_against_ref and static checker take as a CuTe kernel, with nothing read from beside it:
//   the problem's own code, its Model's forward() left out (a stub that says where the computation is);
//   the kernel's source, the contract header and the torch binding as text, built on import by
//     torch.utils.cpp_extension.load for the judge's target, against the nvidia-cutlass wheel's headers;
//   ModelNew(Model): the problem's constructor, parameters and state_dict, the kernel as forward(),
//     refusing (never falling back) any call but the ones in VERIFIED_CALLS.
#include <string>

#include "common/result.h"
#include "report/export_parts.h"

namespace cutegen {

struct KernelBenchFile {
  std::string op_name;
  std::string text;  // model_new.py
  // Set when Model.forward() could not be found in the problem's text (a Model built by assignment, a
  // forward() inherited): the reference computation then stays in the file, and KernelBench's static
  // checker may warn that it uses torch operators.
  std::string note;
};

Result<KernelBenchFile> make_kernelbench_file(const ExportSource& source);

}  // namespace cutegen
