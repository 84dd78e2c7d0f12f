#pragma once
// A loss plan (plans.h) as a candidate .cu file: the two-step reduction of loss_kernel.cu.in with the
// element's chain written in.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_loss_kernel(const LossPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
