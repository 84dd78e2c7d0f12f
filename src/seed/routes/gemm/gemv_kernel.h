#pragma once
// A matrix-vector product plan (gemm_plan.h, kernel gemv: gemm_kernel_choice.h) as a candidate .cu file: the
// memory-bound GEMV template (gemv_kernel.cu.in), with the matrix's and the vector's contract positions
// and the sizes written in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

std::string generate_gemv_kernel(const GemmPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
