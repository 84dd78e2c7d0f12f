#pragma once
// A matrix-product plan (plans.h) as a candidate .cu file: the seed's own tiled fp32 GEMM
// (gemm_kernel.cu.in), with the operands' order, batch and triu/tril mask written in, and for the split_k
// route (gemm_route.h) K split over the grid's z. Kept apart from the library's fast GEMMs
// (examples/kernels/gemm_*.cu): the seed must be right for any shape.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_gemm_kernel(const GemmPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
