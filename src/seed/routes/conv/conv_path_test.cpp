// The library convolution's path choice (ConvPlan::Path, the kernel's CIG_TMA knob): which convolutions the
// TMA-im2col path takes, what its packed copies ask of the workspace, and how the seed falls back to the gather
// kernel where they would not fit the judge's cap -- alone, or as a part of a chain.
#include <gtest/gtest.h>

#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/routes/then/then_chain.h"

namespace cutegen::seed {
namespace {

// problems/conv2d_3x3.py: 8 x 64 x 256 x 256, 128 filters of 3x3, padding 1.
ConvPlan conv2d_3x3() {
  ConvPlan p;
  p.dims = 2;
  p.in_channels = 64;
  p.out_channels = 128;
  p.kernel[1] = p.kernel[2] = 3;
  p.padding[1] = p.padding[2] = 1;
  p.input_shape = {8, 64, 256, 256};
  p.output_shape = {8, 128, 256, 256};
  return p;
}

// The same sizes as library_conv_tma_test.cpp's host planning of the built kernel (the slow tier checks the two
// agree): the packed weight (C' = 3 x 64 = 192), then 8 images' packed input and NHWK output in one chunk.
TEST(ConvPath, TheTmaPathsWorkspaceIsItsPackedCopiesOfOneChunk) {
  const int64_t packed_x = int64_t{8} * 256 * 256 * 192 * 4, packed_w = int64_t{128} * 9 * 192 * 4,
                nhwk = int64_t{8} * 256 * 256 * 128 * 4;
  auto bytes = conv_tma_workspace_bytes(conv2d_3x3());
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_EQ(*bytes, packed_x + packed_w + nhwk);
  // KernelBench 63's layer: 16 images of 16 x 1024 x 1024 (C' = 48 -> 64) would be 16 x 805 MB, so one per chunk.
  ConvPlan big = conv2d_3x3();
  big.in_channels = 16;
  big.input_shape = {16, 16, 1024, 1024};
  big.output_shape = {16, 128, 1024, 1024};
  auto chunked = conv_tma_workspace_bytes(big);
  ASSERT_TRUE(chunked.ok()) << chunked.error().message;
  EXPECT_EQ(*chunked, int64_t{128} * 9 * 64 * 4 + int64_t{1024} * 1024 * 64 * 4 + int64_t{1024} * 1024 * 128 * 4);
  // The bound on that path covers both kernels: CUTLASS may still send a shape to the gather kernel at run time.
  ConvPlan on_tma = conv2d_3x3();
  on_tma.path = ConvPlan::Path::tma_im2col;
  EXPECT_EQ(conv_workspace_bound(on_tma), std::max(*bytes, conv_gather_workspace_bytes(on_tma)));
  EXPECT_EQ(conv_workspace_bound(conv2d_3x3()), conv_gather_workspace_bytes(conv2d_3x3()));
}

TEST(ConvPath, WhatThePathDoesNotTakeSaysWhy) {
  auto refusal = [](ConvPlan p) {
    auto bytes = conv_tma_workspace_bytes(p);
    return bytes ? std::string("taken") : bytes.error().message;
  };
  ConvPlan transposed = conv2d_3x3();
  transposed.kind = ConvPlan::Kind::transposed;
  EXPECT_EQ(refusal(transposed), "a transposed convolution (the TMA path takes forward ones)");
  ConvPlan grouped = conv2d_3x3();
  grouped.groups = 4;
  EXPECT_EQ(refusal(grouped), "groups=4 (the TMA path takes dense layers)");
  ConvPlan rgb = conv2d_3x3();
  rgb.in_channels = 3;
  rgb.input_shape[1] = 3;
  EXPECT_EQ(refusal(rgb), "3 input channels (the TMA path packs at least 8: fewer would be mostly padding)");
  ConvPlan odd = conv2d_3x3();
  odd.out_channels = 30;
  odd.output_shape[1] = 30;
  EXPECT_EQ(refusal(odd), "30 output channels (the TMA path's NHWK rows need a multiple of 4)");
  ConvPlan untyped = conv2d_3x3();
  untyped.output_shape.clear();
  EXPECT_EQ(refusal(untyped), "the convolution's input or output shape is not in the trace");
}

TEST(ConvPath, TheGatherKernelWhereThePackedCopiesWouldNotFitTheBudget) {
  ConvPlan p = conv2d_3x3();
  const int64_t need = *conv_tma_workspace_bytes(p);
  choose_conv_path(p, need);
  EXPECT_EQ(p.path, ConvPlan::Path::tma_im2col);
  EXPECT_TRUE(p.path_reason.empty());
  choose_conv_path(p, need - 1);
  EXPECT_EQ(p.path, ConvPlan::Path::gather);
  EXPECT_EQ(p.path_reason, "the TMA path's packed copies (671973376 bytes) would not fit what the judge's workspace "
                           "cap leaves for the convolution (671973375 bytes)");
  ConvPlan grouped = conv2d_3x3();
  grouped.groups = 2;
  choose_conv_path(grouped, kWorkspaceCeiling);
  EXPECT_EQ(grouped.path, ConvPlan::Path::gather);
  EXPECT_EQ(grouped.path_reason, "groups=2 (the TMA path takes dense layers)");
}

// A chain whose parts share one scratch region: the part whose TMA workspace passes what the cap leaves goes to
// the gather kernel, made again as its own route's plan; a part that fits keeps the path.
TEST(ConvPath, AChainMovesOnlyThePartsThatDoNotFitToTheGatherKernel) {
  ConvPlan large = conv2d_3x3(), small = conv2d_3x3();
  large.path = small.path = ConvPlan::Path::tma_im2col;
  small.input_shape = {1, 64, 32, 32};
  small.output_shape = {1, 128, 32, 32};
  std::vector<ThenStep> parts{{.seed = matched_plan<kConvEpilogueRoute>(large)}, {.seed = matched_plan<kConvRoute>(small)}};
  const int64_t intermediates = int64_t{64} << 20, cap = int64_t{256} << 20;
  fit_convolution_parts(parts, intermediates, cap);
  const auto* first = dynamic_cast<const TypedPlan<ConvPlan>*>(parts[0].seed.get());
  const auto* second = dynamic_cast<const TypedPlan<ConvPlan>*>(parts[1].seed.get());
  ASSERT_TRUE(first && second);
  EXPECT_EQ(parts[0].seed->route(), "conv_epilogue");
  EXPECT_EQ(first->plan().path, ConvPlan::Path::gather);
  EXPECT_EQ(first->plan().path_reason, "the chain's results leave 201326592 bytes of the judge's workspace cap, less "
                                       "than the TMA path's packed copies (671973376 bytes)");
  EXPECT_EQ(parts[1].seed->route(), "conv");
  EXPECT_EQ(second->plan().path, ConvPlan::Path::tma_im2col);
  EXPECT_LE(then_step_scratch(*parts[0].seed) + intermediates, cap);
}

}  // namespace
}  // namespace cutegen::seed
