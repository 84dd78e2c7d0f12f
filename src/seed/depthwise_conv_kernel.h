#pragma once
// A depthwise convolution plan (plans.h) as a candidate .cu file: the window kernel of
// depthwise_conv_kernel.cu.in.
#include <string>

#include "seed/plans.h"

namespace cutegen::seed {

std::string generate_depthwise_conv_kernel(const DepthwiseConvPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
