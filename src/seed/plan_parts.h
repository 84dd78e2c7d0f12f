#pragma once
// Pieces several routes' plans share (each route's plan is in its folder, src/seed/routes/<route>/).
#include <cstdint>
#include <string>

namespace cutegen::seed {

// The most workspace a kernel may ask the judge for (python/cutegen_worker/memory.py's cap).
inline constexpr int64_t kWorkspaceCeiling = int64_t{4} << 30;

// One SSA statement of a device function: `const float <value> = <expr>;  // <what>`.
struct PointwiseStep {
  std::string value;
  std::string expr;
  std::string what;          // e.g. "leaky_relu(v1, negative_slope=0.01)"
};

}  // namespace cutegen::seed
