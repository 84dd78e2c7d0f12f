#pragma once
// A matrix-product plan (gemm_plan.h) as a candidate .cu file: the seed's own tiled fp32 GEMM
// (gemm_kernel.cu.in), with the operands' order, batch and triu/tril mask written in, and for the split_k
// kernel (gemm_kernel_choice.h) K split over the grid's z. Kept apart from the library's fast GEMMs
// (library/gemm_*.cu): the seed must be right for any shape.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

std::string generate_gemm_kernel(const GemmPlan& plan, const CommentText& problem);

// The texts the library GEMM's epilogue seed (library_gemm_epilogue.h) shares with this template: the body of
// `epilogue(y, n, cols)` (post_side false) or `post(s, n, cols)` (true) -- the column operands that side reads,
// each loaded once, then one statement per op of forward() -- and the Reduce / Norm enumerators of the plan.
std::string gemm_epilogue_body(const GemmPlan& plan, bool post_side);
std::string gemm_reduce_enum(RowReduce reduce);
std::string gemm_norm_enum(GemmNorm norm);

}  // namespace cutegen::seed
