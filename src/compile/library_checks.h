#pragma once
// Static checks on a candidate's source and built library. They make "fall back to cuBLAS/PyTorch",
// "load something at run time" and "skip CuTe" structurally impossible, whatever the prompt said.
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace cutegen {

struct CheckViolation {
  std::string code;     // stable identifier, e.g. "forbidden-import"; tests and the agent key on it
  std::string message;  // names the symbol/library/line and says what the contract allows instead
};

// Source-level rules that the library checks rely on (e.g. no #line, which could fake line tables).
std::vector<CheckViolation> check_source(const std::string& source);

// Inspects the shared library nvcc built: imported symbols and needed libraries against the allow-list,
// the contract's entry point, and CuTe code in the device line tables. An Error means the file could
// not be read as a library at all (a tool-side problem, not a verdict on the candidate).
Result<std::vector<CheckViolation>> check_library(const std::filesystem::path& library,
                                                  const std::filesystem::path& cutlass_include_dir);

}  // namespace cutegen
