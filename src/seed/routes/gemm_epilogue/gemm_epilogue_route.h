#pragma once
// The gemm_epilogue route (docs/seed.md, "Matrix products with an epilogue"): one matrix product --
// nn.Linear / F.linear with its weight and optional bias, or a matmul of inputs and parameters -- followed by
// pointwise ops of the table on the product, numbers, and per-output-column vectors (a bias of shape (N,) or
// (1, N), a (1,)-shaped parameter); optionally one reduction over each row (gemm_epilogue_reduce) or one
// GroupNorm / training-mode BatchNorm (gemm_epilogue_norm) and a pointwise chain after it. The product may be
// used more than once (`x * s + x`), so residuals with it are pointwise too. The gemm route's plan and emitter
// apply the chain in registers before the product is stored: on the library's 3xTF32 GEMM for a large product
// (library_gemm_epilogue.h), else on the seed's tiled GEMM (gemm_kernel_choice.h decides).
#include "seed/route.h"
#include "seed/routes/gemm/gemm_route.h"

namespace cutegen::seed {

// The GEMM plan with its epilogue, or the reason (the first thing the seed cannot fuse).
Result<GemmPlan> match_gemm_epilogue(const OpGraph& g);

inline constexpr RouteDef<GemmPlan> kGemmEpilogueRoute{"gemm_epilogue", match_gemm_epilogue, gemm_description,
                                                       gemm_pattern, emit_gemm};

}  // namespace cutegen::seed
