#pragma once
// A matrix-product plan whose row sum or mean is of an affine function of the product (gemm_kernel_choice.h:
// kernel folded) as a candidate .cu file: the reduction moved through the product by linearity, so the seed is
// a fold of B with the epilogue's per-column coefficients and one matrix-vector product (folded_gemm_kernel.cu.in).
#include <cstdint>
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

// "" when the plan's output is the sum or mean over each row of an epilogue that is affine in the product's
// element (plan.affine_epilogue) of an unbatched fp32 product with A (M, K) row-major and no mask or norm; else
// why not.
std::string folded_gemm_refusal(const GemmPlan& plan);

// The workspace the template asks for, in bytes (a[N], b[N], c, w[K] and the K-slices' partial sums, in double).
int64_t folded_gemm_workspace_bytes(const GemmPlan& plan);

std::string generate_folded_gemm_kernel(const GemmPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
