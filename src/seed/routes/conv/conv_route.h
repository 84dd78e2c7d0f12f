#pragma once
// The conv route (docs/seed.md, "Convolutions"): every forward convolution the depthwise and pointwise
// routes leave, and every transposed one, as the library's implicit-GEMM convolution with its kSpec line
// set from the module.
#include "seed/route.h"
#include "seed/routes/conv/conv_plan.h"

namespace cutegen::seed {

Result<ConvPlan> match_conv(const OpGraph& g);
// "convolution y = conv2d(...)"
std::string conv_description(const ConvPlan& plan);
std::string conv_pattern(const ConvPlan& plan);
Result<std::string> emit_conv(const ConvPlan& plan, const CommentText& problem);
// The kSpec line the plan gives the library kernel (tests read it).
std::string conv_spec_line(const ConvPlan& plan);

inline constexpr RouteDef<ConvPlan> kConvRoute{"conv", match_conv, conv_description, conv_pattern, emit_conv};

}  // namespace cutegen::seed
