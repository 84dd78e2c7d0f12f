#pragma once
// A reduction plan (plans.h) as a candidate .cu file: the reduce-over-one-dimension kernel
// (reduce_kernel.cu.in) with the op's identity, combine and finish written in.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_reduce_kernel(const ReducePlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
