#pragma once
// The depthwise_conv route (docs/seed.md, "Depthwise convolutions"): nn.Conv1d..3d with groups =
// in_channels = out_channels of a forward input (the worker gives the window per dimension, the weight and
// the bias as parameters). A dense or grouped convolution says so.
#include "seed/route.h"
#include "seed/routes/depthwise_conv/depthwise_conv_plan.h"

namespace cutegen::seed {

Result<DepthwiseConvPlan> match_depthwise_conv(const OpGraph& g);
// "depthwise convolution y = ..."
std::string depthwise_conv_description(const DepthwiseConvPlan& plan);
std::string depthwise_conv_pattern(const DepthwiseConvPlan& plan);
Result<std::string> emit_depthwise_conv(const DepthwiseConvPlan& plan, const CommentText& problem);

inline constexpr RouteDef<DepthwiseConvPlan> kDepthwiseConvRoute{"depthwise_conv", match_depthwise_conv, depthwise_conv_description, depthwise_conv_pattern, emit_depthwise_conv};

}  // namespace cutegen::seed
