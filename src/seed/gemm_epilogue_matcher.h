#pragma once
// The gemm_epilogue pattern (docs/seed.md): one matrix product -- nn.Linear / F.linear with its weight
// and optional bias, or a matmul of inputs and parameters -- followed by pointwise ops of the table on
// the product, numbers, and per-output-column vectors (a bias of shape (N,) or (1, N), a (1,)-shaped
// parameter). The product may be used more than once (`x * s + x`), so residuals with it are pointwise
// too. The seed GEMM applies the chain in registers before its store: one kernel.
#include <optional>
#include <string>

#include "seed/op_graph.h"
#include "seed/plans.h"

namespace cutegen::seed {

// The GEMM plan with its epilogue, or nullopt with the reason (the first thing the seed cannot fuse).
std::optional<GemmPlan> match_gemm_epilogue(const OpGraph& g, std::string& reason);

}  // namespace cutegen::seed
