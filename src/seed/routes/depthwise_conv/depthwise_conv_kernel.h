#pragma once
// A depthwise convolution plan (depthwise_conv_plan.h) as a candidate .cu file: the window kernel of
// depthwise_conv_kernel.cu.in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/depthwise_conv/depthwise_conv_plan.h"

namespace cutegen::seed {

std::string generate_depthwise_conv_kernel(const DepthwiseConvPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
