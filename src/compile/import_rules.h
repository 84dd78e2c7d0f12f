#pragma once
// What the built kernel.so may import: an allow-list of what an honest CuTe kernel needs, found by
// compiling the examples, the attack suite and CuTe kernels using TMA, wgmma, cp.async and cluster
// launches (docs/kernel-contract.md, "What the library may import"). Everything else is refused; the
// refusals an LLM is likely to hit carry a reason saying what to do instead.
#include <optional>
#include <string>

namespace cutegen {

// Why the undefined dynamic symbol `name` may not be imported; nullopt when it may. `provider` is the
// library its symbol version names ("" when unversioned).
std::optional<std::string> import_problem(const std::string& name, const std::string& provider);

// Whether the library may list `soname` as DT_NEEDED: the CUDA runtime and driver, the C/C++ runtime.
bool allowed_needed_library(const std::string& soname);

}  // namespace cutegen
