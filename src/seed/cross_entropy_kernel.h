#pragma once
// A cross-entropy plan (plans.h) as a candidate .cu file (cross_entropy_kernel.cu.in).
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_cross_entropy_kernel(const CrossEntropyPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
