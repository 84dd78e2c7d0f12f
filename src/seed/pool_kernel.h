#pragma once
// A pooling plan (plans.h) as a candidate .cu file: the window kernel of pool_kernel.cu.in.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_pool_kernel(const PoolPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
