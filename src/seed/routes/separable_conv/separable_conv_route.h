#pragma once
// The separable_conv route (docs/seed.md, "Convolutions"): a convolution the library's implicit-GEMM
// convolution takes, of a depthwise convolution of a forward input -- two launches through the workspace,
// the depthwise route's kernel and then the library kernel.
#include "seed/route.h"
#include "seed/routes/separable_conv/separable_conv_plan.h"

namespace cutegen::seed {

Result<SeparableConvPlan> match_separable_conv(const OpGraph& g);
// "depthwise-separable convolution y = conv2d(conv2d(x, ...), ...)"
std::string separable_conv_description(const SeparableConvPlan& plan);
std::string separable_conv_pattern(const SeparableConvPlan& plan);
Result<std::string> emit_separable_conv(const SeparableConvPlan& plan, const CommentText& problem);

inline constexpr RouteDef<SeparableConvPlan> kSeparableConvRoute{
    "separable_conv", match_separable_conv, separable_conv_description, separable_conv_pattern, emit_separable_conv};

}  // namespace cutegen::seed
