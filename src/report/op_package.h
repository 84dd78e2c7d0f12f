#pragma once
// The installable op package (docs/export.md): a directory `pip install --no-build-isolation DIR`
// takes as it is. Its setup.py compiles the kernel's source (beside it, in csrc/) and a torch binding
// with torch's CUDAExtension for the judge's target; importing it registers torch.ops.cutegen.<op>
// through torch.library, with a fake implementation so torch.compile(model, fullgraph=True) traces
// through it. The op runs the kernel on the calls the kernel was verified for and on a GPU of the
// verified compute capability; any other call runs the problem's own PyTorch computation (one warning),
// never the unverified kernel.
//   pyproject.toml  setup.py  README.md
//   cutegen_<op>/__init__.py     the op, VERIFIED_CALLS, ModelNew
//   cutegen_<op>/reference.py    the problem file, as judged
//   cutegen_<op>/csrc/kernel.cu  binding.cpp  include/cutegen/kernel.h
#include <string>
#include <vector>

#include "common/result.h"
#include "report/export_parts.h"

namespace cutegen {

struct PackageFile {
  std::string path;  // relative to the package directory
  std::string text;
};

struct OpPackage {
  std::string op_name;      // torch.ops.cutegen.<op_name>
  std::string module_name;  // cutegen_<op_name>, what `import` takes
  std::string dist_name;    // cutegen-<op-name>, what pip lists
  std::vector<PackageFile> files;
};

Result<OpPackage> make_op_package(const ExportSource& source);

}  // namespace cutegen
