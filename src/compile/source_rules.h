#pragma once
// Rules on the candidate's text, checked before nvcc starts: a refused file never reaches the compiler,
// so a header it names is never opened and nothing outside the allowed roots can be quoted back.
//
// * #include / __has_include name a header from the allowed roots only (include_rules below);
// * no #line or GNU linemarkers (they would rename code in diagnostics and line tables), no #embed,
//   __has_embed, #include_next, #import, no pragma that changes how files are found or treated;
// * no host code that runs when the library is loaded or unloaded: constructor/destructor attributes,
//   .init_array/.fini_array/.ctors/.dtors sections, exit handlers;
// * no assembler that reads files (.incbin, .include);
// * no __DATE__/__TIME__/__TIMESTAMP__ (builds must be reproducible: the cache and the CuTe analysis
//   compile must see the same code as the build).
// The scanner does not expand macros; what a macro could still assemble is caught on the built
// library (its load-time entries and imports) or contained by the sandbox.
#include <optional>
#include <string>
#include <vector>

#include "compile/check_violation.h"

namespace cutegen {

std::vector<CheckViolation> check_source_rules(const std::string& source);

// Why `target` (the text between <> or "") may not be included; nullopt when it may. Allowed: a path
// of plain components (no absolute path, no "..", no backslash) that is either one header name
// (<vector>, <cuda_runtime.h>, "my_header.cuh") or starts with an allowed root: cute/, cutlass/,
// cutegen/, or a CUDA toolkit / C/C++ system directory (cuda/, cub/, thrust/, nv/, cooperative_groups/,
// crt/, sys/, bits/, ext/, experimental/).
std::optional<std::string> include_problem(const std::string& target);

}  // namespace cutegen
