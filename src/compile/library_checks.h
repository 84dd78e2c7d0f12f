#pragma once
// Static checks on the shared library nvcc built. They make "fall back to cuBLAS/PyTorch", "load
// something at run time" and "run host code on load" structurally impossible, whatever the prompt said.
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"
#include "compile/check_violation.h"
#include "compile/entry_points.h"

namespace cutegen {

struct LibraryInspection {
  std::vector<CheckViolation> violations;
  std::vector<std::string> kernels;  // mangled name of every kernel (entry function) in the device code
  std::vector<std::string> device_images;  // each cubin of the fatbin, byte for byte
  // Those of them that hold machine code (an executable section or a kernel symbol): what nvdisasm reads
  // for the CuTe check. Every -shared build also carries nvlink's device-link image, which has none, and
  // nvdisasm takes ~0.4 s to start even on that.
  std::vector<std::string> code_images;
};

// Needed libraries and every undefined dynamic symbol (resolved to its providing library through symbol
// versions) against the import allow-list (import_rules.h); the contract's entry point; host code
// that runs when the library is loaded or unloaded (load_time_code.h); device code present, readable and
// free of CUTLASS's "used without targeting" trap; no device code outside the fatbin (a cubin, PTX or
// bitcode in the host data, which the driver could load at run time); and the list of kernels for the
// per-kernel CuTe check (cute_usage.h). An Error means the file could not be read as a library at all (a tool-side
// problem, not a verdict on the candidate).
Result<LibraryInspection> check_library(const std::filesystem::path& library);

// Which of the contract's entry points (compile/entry_points.h) `library` defines, from its dynamic symbol
// table alone: what the judge tells the worker of a library check_library passed (a kernel with a workspace
// is loaded twice). Error: the file is not a readable library.
Result<EntryPoints> library_entry_points(const std::filesystem::path& library);

}  // namespace cutegen
