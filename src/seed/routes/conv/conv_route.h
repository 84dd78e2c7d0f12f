#pragma once
// The conv route (docs/seed.md, "Convolutions"): every forward convolution the depthwise and pointwise
// routes leave, and every transposed one, as the library's implicit-GEMM convolution with its kSpec line
// set from the module.
#include "seed/route.h"
#include "seed/routes/conv/conv_plan.h"

namespace cutegen::seed {

Result<ConvPlan> match_conv(const OpGraph& g);
// The plan of convolution node `conv` -- its geometry, its tensors' contract positions and its pattern -- or
// why the library convolution does not take it (a convolution of a computed value, a window too large, ...).
Result<ConvPlan> conv_plan_of(const OpGraph& g, const Node& conv);
// "convolution y = conv2d(...)"; with an epilogue "convolution with a pointwise epilogue ..."
std::string conv_description(const ConvPlan& plan);
std::string conv_pattern(const ConvPlan& plan);
Result<std::string> emit_conv(const ConvPlan& plan, const CommentText& problem);
// The library file with the lines the plan sets (kSpec; kInputs and the epilogue where the plan has them), no
// header: emit_conv's kernel, and the second half of a separable convolution's (separable_conv_route.h).
Result<std::string> conv_library_text(const ConvPlan& plan);
// The kSpec line the plan gives the library kernel (tests read it).
std::string conv_spec_line(const ConvPlan& plan);
// At least the workspace the library convolution asks for this plan on its default gather path (the tap table and
// the weight split into TF32 parts, library/conv_implicit_gemm.cu's `layout`), from the module's geometry alone:
// every phase counted with the most taps one can have, the output channels padded to the largest CIG_TILE_N. The
// CIG_TMA variant's packed copies are more; the judge refuses that variant where they exceed its cap.
int64_t conv_workspace_bound(const ConvPlan& plan);

inline constexpr RouteDef<ConvPlan> kConvRoute{"conv", match_conv, conv_description, conv_pattern, emit_conv};

}  // namespace cutegen::seed
