#pragma once
// Where cutegen finds its inputs (CUTLASS headers, the kernel-contract header) and keeps its caches.
#include <filesystem>
#include <string>

#include "common/result.h"

namespace cutegen {

// The CUTLASS include directory (the one holding cute/ and cutlass/): $CUTLASS_DIR/include when
// CUTLASS_DIR is set, otherwise the headers scripts/setup installed when this binary was configured.
Result<std::filesystem::path> cutlass_include_dir();

// "4.2.0", read from cutlass/version.h.
Result<std::string> cutlass_version(const std::filesystem::path& include_dir);

// The directory holding cutegen/kernel.h (the contract header candidates include).
std::filesystem::path contract_include_dir();

// $CUTEGEN_CACHE_DIR, else $XDG_CACHE_HOME/cutegen, else ~/.cache/cutegen.
std::filesystem::path cache_root();

}  // namespace cutegen
