#pragma once
// The conv route (docs/seed.md, "Convolutions"): every forward convolution the depthwise and pointwise
// routes leave, and every transposed one, as the library's implicit-GEMM convolution with its kSpec line
// set from the module.
#include "common/result.h"
#include "seed/route.h"
#include "seed/routes/conv/conv_plan.h"

namespace cutegen::seed {

Result<ConvPlan> match_conv(const OpGraph& g);
// The plan of convolution node `conv` -- its geometry, its tensors' contract positions and its pattern -- or
// why the library convolution does not take it (a convolution of a computed value, a window too large, ...).
// With `take_bf16`, a convolution whose tensors are all bf16 too (ConvPlan::bf16: the TMA path's only; the caller
// refuses it elsewhere), for the plain conv route; every other caller's plans are fp32.
Result<ConvPlan> conv_plan_of(const OpGraph& g, const Node& conv, bool take_bf16 = false);
// "convolution y = conv2d(...)"; with an epilogue "convolution with a pointwise epilogue ..."
std::string conv_description(const ConvPlan& plan);
std::string conv_pattern(const ConvPlan& plan);
// "library conv_implicit_gemm (TMA im2col)", "... (gather)" or "... (direct)": the kernel and the path the seed
// sets, as bench's seed column and a chain's part lines name it.
std::string conv_kernel_name(const ConvPlan& plan);
// "" unless the plan is a bf16 convolution left off the TMA path, which the library convolution cannot run (its
// gather kernel reads fp32): then why, for the conv and conv_epilogue routes' refusal.
std::string bf16_path_refusal(const ConvPlan& plan);
Result<std::string> emit_conv(const ConvPlan& plan, const CommentText& problem);
// The library file with the lines the plan sets (kSpec; kInputs and the epilogue where the plan has them), no
// header: emit_conv's kernel, and the second half of a separable convolution's (separable_conv_route.h).
Result<std::string> conv_library_text(const ConvPlan& plan);
// The kSpec line the plan gives the library kernel (tests read it).
std::string conv_spec_line(const ConvPlan& plan);
// At least the workspace the library convolution's gather kernel asks for this plan (the tap table and the weight
// split into TF32 parts, library/conv_implicit_gemm.cu's `layout`), from the module's geometry alone: every phase
// counted with the most taps one can have, the output channels padded to the largest CIG_TILE_N.
int64_t conv_gather_workspace_bytes(const ConvPlan& plan);
// The workspace the TMA-im2col path asks for the plan's shapes under the strict policy, whose packed copies are the
// largest (library/conv_implicit_gemm.cu's `tma_path::layout_for`: the packed weight, then one chunk of images'
// packed input and NHWK output), or why the path does not take the convolution.
Result<int64_t> conv_tma_workspace_bytes(const ConvPlan& plan);
// At least the workspace the seed's kernel asks for: on the TMA path the larger of the two (the path's shape
// checks that only CUTLASS can make at run time send a convolution to the gather kernel).
int64_t conv_workspace_bound(const ConvPlan& plan);
// Sets plan.path: the TMA-im2col path where it takes the convolution and its workspace fits `budget` bytes (what
// the judge's cap leaves beside the rest of the seed's workspace), else the direct path where it takes it (few
// input channels), else the gather kernel; path_reason says why not the TMA path.
void choose_conv_path(ConvPlan& plan, int64_t budget);
// The largest K of the convolution's phases (taps of the phase x input channels of a group): what the gather
// kernel's k-tiles and the direct path's shared memory hold.
int64_t conv_phase_k(const ConvPlan& plan);
// The direct path's tile (the library's CIG_DIRECT_TILE_N) for a group's output channels: the narrowest of 16,
// 24, 32 and 64 that covers them.
int direct_tile_n(int64_t out_channels_per_group);
// The library's kDirectMaxK: the direct path keeps a phase's K in shared memory up to this, which depends on how
// many of the weight's columns a tile holds there.
inline constexpr int64_t direct_max_k(int tile_n) { return tile_n <= 32 ? 256 : 128; }
// Why the direct path (FP32 FMA, library/conv_implicit_gemm.cu's CIG_DIRECT) does not take the convolution, or ""
// when it could: fp32 tensors, at most 8 input channels a group, and K per phase at most direct_max_k of its
// tile. choose_conv_path takes it below 8 channels, and at 8 where the TMA path would take the layer.
std::string direct_path_refusal(const ConvPlan& plan);
// "TMA im2col", "gather" or "direct".
std::string conv_path_name(ConvPlan::Path path);

inline constexpr RouteDef<ConvPlan> kConvRoute{"conv", match_conv, conv_description, conv_pattern, emit_conv};

}  // namespace cutegen::seed
