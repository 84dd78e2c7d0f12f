#pragma once
// A broadcast plan (plans.h) as a candidate .cu file: the per-element kernel of broadcast_kernel.cu.in.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_broadcast_kernel(const BroadcastPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
