#pragma once
// A matrix-vector product plan (plans.h, route gemv: gemm_route.h) as a candidate .cu file: the
// memory-bound GEMV template (gemv_kernel.cu.in), with the matrix's and the vector's contract positions
// and the sizes written in.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_gemv_kernel(const GemmPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
