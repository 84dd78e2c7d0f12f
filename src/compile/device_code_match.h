#pragma once
// The CuTe check (cute_usage.h) reads a second, unoptimised compile of the candidate. Its verdict is
// about the build only if both compiles read the same device code. Sharing the flags is not proof:
// the host compiler preprocesses the device side, and a flag given to one compile alone (-fPIC turns
// off __PIE__) let `#ifdef` show the analysis a CuTe kernel and the build a raw one. So both compiles
// keep nvcc's intermediate files (--keep) and the device side's preprocessed translation units
// (<stem>.cpp1.ii) must be byte for byte the same.
#include <filesystem>
#include <optional>

#include "common/result.h"
#include "compile/check_violation.h"

namespace cutegen {

// An "analysis-mismatch" violation when a device translation unit differs, nullopt when all are the
// same; an Error when nvcc kept none to compare (this nvcc names its files differently: the check
// cannot be made, which is not the candidate's fault).
Result<std::optional<CheckViolation>> compare_device_code(const std::filesystem::path& build_keep_dir,
                                                          const std::filesystem::path& analysis_keep_dir);

}  // namespace cutegen
