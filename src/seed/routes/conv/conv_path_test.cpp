// The library convolution's path choice (ConvPlan::Path, the kernel's CIG_TMA and CIG_DIRECT knobs): which
// convolutions the TMA-im2col path and the direct path take, what the TMA path's packed copies ask of the
// workspace, and how the seed falls back to the gather kernel where they would not fit the judge's cap -- alone,
// or as a part of a chain.
#include <gtest/gtest.h>

#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/routes/then/then_chain.h"
#include "seed/seed.h"

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
// agree): the packed weight (C' = 3 x 64 = 192), then 8 images' packed input in one chunk; the output is stored
// NCHW in place (the library's CIG_TMA_NCHW 1), no NHWK buffer.
TEST(ConvPath, TheTmaPathsWorkspaceIsItsPackedCopiesOfOneChunk) {
  const int64_t packed_x = int64_t{8} * 256 * 256 * 192 * 4, packed_w = int64_t{128} * 9 * 192 * 4;
  auto bytes = conv_tma_workspace_bytes(conv2d_3x3());
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_EQ(*bytes, packed_x + packed_w);
  // KernelBench 63's layer: 16 images of 16 x 1024 x 1024 (C' = 48 -> 64) would be 16 x 805 MB, so one per chunk.
  ConvPlan big = conv2d_3x3();
  big.in_channels = 16;
  big.input_shape = {16, 16, 1024, 1024};
  big.output_shape = {16, 128, 1024, 1024};
  auto chunked = conv_tma_workspace_bytes(big);
  ASSERT_TRUE(chunked.ok()) << chunked.error().message;
  EXPECT_EQ(*chunked, int64_t{128} * 9 * 64 * 4 + int64_t{1024} * 1024 * 64 * 4);
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
  // Stride 1: the forward convolution with the window flipped (padding 1 of a 3x3 window: 1 in front).
  ConvPlan transposed = conv2d_3x3();
  transposed.kind = ConvPlan::Kind::transposed;
  EXPECT_EQ(refusal(transposed), "taken");
  EXPECT_EQ(*conv_tma_workspace_bytes(transposed), *conv_tma_workspace_bytes(conv2d_3x3()));
  ConvPlan strided = transposed;
  strided.stride[2] = 2;
  strided.output_shape = {8, 128, 256, 511};
  EXPECT_EQ(refusal(strided),
            "a transposed convolution of stride (1, 2) (the TMA path takes forward ones and transposed ones of stride 1)");
  ConvPlan cropped = transposed;
  cropped.padding[1] = 3;
  cropped.output_shape = {8, 128, 252, 256};
  EXPECT_EQ(refusal(cropped), "a transposed convolution whose padding (3, 1) passes dilation x (kernel - 1) (the TMA "
                              "path would have to crop)");
  cropped.dilation[1] = 2;  // d (k - 1) = 4: padding 3 is 1 in front
  EXPECT_EQ(refusal(cropped), "taken");
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

// conv2d_3x3's buffers as the seed plans them, its 64 channels in [big | small] pairs (C' = 128): the packed weight
// (128 x 9 x 128 floats), then per image the packed input (65536 x 128); the output is stored NCHW in place.
constexpr int64_t kPackedWeight = int64_t{128} * 9 * 128 * 4, kPerImage = int64_t{65536} * 128 * 4;

// The seed pairs the TMA path's operands where the input channels fill whole blocks of 32 (KernelBench 55: 12.50 ->
// 10.60 ms on an H100), not 63's 16 (pairs pad to 64 and multiply a third more), and gives each layer the narrowest
// tile that covers a group's output channels (58, 16 channels: 6.68 ms at 64 wide, 3.77 at 16).
TEST(ConvPath, PairsWhereTheChannelsFillBlocksOf32AndNarrowTilesForFewOutputs) {
  ConvPlan p = conv2d_3x3();
  choose_conv_path(p, kWorkspaceCeiling);
  ASSERT_EQ(p.path, ConvPlan::Path::tma_im2col) << p.path_reason;
  EXPECT_TRUE(p.tma_paired);
  EXPECT_EQ(p.tma_tile_n, 128);
  EXPECT_EQ(*conv_tma_workspace_bytes(p), kPackedWeight + 8 * kPerImage);
  ConvPlan narrow = conv2d_3x3();
  narrow.in_channels = 16;
  narrow.out_channels = 64;
  narrow.input_shape = {8, 16, 256, 256};
  narrow.output_shape = {8, 64, 256, 256};
  choose_conv_path(narrow, kWorkspaceCeiling);
  ASSERT_EQ(narrow.path, ConvPlan::Path::tma_im2col) << narrow.path_reason;
  EXPECT_FALSE(narrow.tma_paired);
  EXPECT_EQ(narrow.tma_tile_n, 64);
  auto src = emit_conv(narrow, CommentText("narrow.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_EQ(narrow.tma_stages, 4);
  EXPECT_EQ(narrow.tma_min_ctas, 1);
  EXPECT_EQ(p.tma_stages, 4);  // the paired 128-wide tile: two CTAs per SM
  EXPECT_EQ(p.tma_min_ctas, 2);
  auto paired_src = emit_conv(p, CommentText("paired.py"));
  ASSERT_TRUE(paired_src.ok()) << paired_src.error().message;
  EXPECT_NE(paired_src->find("#define CIG_TMA_STAGES 4  // set by the seed: room for 2 CTAs of the 128-wide tile per SM"),
            std::string::npos);
  EXPECT_NE(paired_src->find("#define CIG_TMA_MIN_CTAS 2  // set by the seed: registers for 2 CTAs per SM"),
            std::string::npos);
  EXPECT_EQ(src->find("#define CIG_TMA_MIN_CTAS 2"), std::string::npos);
  ConvPlan unpaired = conv2d_3x3();  // 16 input channels to 128 outputs: the 128-wide tile, not paired
  unpaired.in_channels = 16;
  unpaired.input_shape = {8, 16, 256, 256};
  choose_conv_path(unpaired, kWorkspaceCeiling);
  ASSERT_EQ(unpaired.path, ConvPlan::Path::tma_im2col) << unpaired.path_reason;
  EXPECT_FALSE(unpaired.tma_paired);
  EXPECT_EQ(unpaired.tma_tile_n, 128);
  EXPECT_EQ(unpaired.tma_stages, 4);
  EXPECT_EQ(unpaired.tma_min_ctas, 2);
  EXPECT_NE(src->find("#define CIG_TMA_TILE_N 64  // set by the seed: 64 output channels"), std::string::npos);
  EXPECT_NE(src->find("#define CIG_TMA_STAGES 4  // set by the seed: room for three or more CTAs of the 64-wide tile per SM"),
            std::string::npos);
  EXPECT_NE(src->find("#define CIG_TMA_PAIRED 0\n"), std::string::npos);
  for (const auto& [channels, tile] : std::vector<std::pair<int64_t, int>>{{8, 16}, {16, 16}, {24, 32}, {32, 32},
                                                                            {40, 64}, {64, 64}, {96, 128}}) {
    ConvPlan few = conv2d_3x3();
    few.out_channels = channels;
    few.output_shape = {8, channels, 256, 256};
    choose_conv_path(few, kWorkspaceCeiling);
    ASSERT_EQ(few.path, ConvPlan::Path::tma_im2col) << few.path_reason;
    EXPECT_EQ(few.tma_tile_n, tile) << channels << " output channels";
    EXPECT_EQ(few.tma_stages, 4) << channels << " output channels";
    EXPECT_EQ(few.tma_min_ctas, tile == 128 ? 2 : 1) << channels << " output channels";
    few.bf16 = true;  // the narrower tiles were judged in strict only
    choose_conv_path(few, kWorkspaceCeiling);
    EXPECT_EQ(few.tma_tile_n, std::max(tile, 64)) << channels << " output channels, bf16";
    EXPECT_EQ(few.tma_min_ctas, 1) << channels << " output channels, bf16";
  }
  ConvPlan grouped = conv2d_3x3();  // off the TMA path, neither is set
  grouped.groups = 2;
  choose_conv_path(grouped, kWorkspaceCeiling);
  EXPECT_EQ(grouped.path, ConvPlan::Path::gather);
  EXPECT_FALSE(grouped.tma_paired);
  EXPECT_EQ(grouped.tma_tile_n, 128);
  EXPECT_EQ(grouped.tma_stages, 0);
  EXPECT_EQ(grouped.tma_min_ctas, 1);
}

TEST(ConvPath, FewerImagesPerChunkWhereTheLibrarysChunkWouldNotFitTheBudget) {
  ConvPlan p = conv2d_3x3();
  p.tma_paired = true;  // as choose_conv_path plans it
  const int64_t need = *conv_tma_workspace_bytes(p);
  EXPECT_EQ(need, kPackedWeight + 8 * kPerImage);
  choose_conv_path(p, need);
  EXPECT_EQ(p.path, ConvPlan::Path::tma_im2col);
  EXPECT_EQ(p.tma_chunk_images, 0);  // the library's own chunk: all 8 images
  EXPECT_TRUE(p.path_reason.empty());
  choose_conv_path(p, need - 1);
  EXPECT_EQ(p.path, ConvPlan::Path::tma_im2col);
  EXPECT_EQ(p.tma_chunk_images, 7);
  EXPECT_EQ(*conv_tma_workspace_bytes(p), kPackedWeight + 7 * kPerImage);
  EXPECT_EQ(conv_workspace_bound(p), kPackedWeight + 7 * kPerImage);
  auto src = emit_conv(p, CommentText("conv2d_3x3.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_NE(src->find("#define CIG_TMA_CHUNK_IMAGES 7  // set by the seed: as many images' packed copies as fit"),
            std::string::npos);
  EXPECT_EQ(src->find("#define CIG_TMA 0"), std::string::npos);
  // Choosing again for a larger budget goes back to the library's own chunk.
  choose_conv_path(p, need);
  EXPECT_EQ(p.tma_chunk_images, 0);
}

TEST(ConvPath, TheGatherKernelWhereNotOneImagesPackedCopiesFitTheBudget) {
  ConvPlan p = conv2d_3x3();
  choose_conv_path(p, kPackedWeight + kPerImage);
  EXPECT_EQ(p.path, ConvPlan::Path::tma_im2col);
  EXPECT_EQ(p.tma_chunk_images, 1);
  choose_conv_path(p, kPackedWeight + kPerImage - 1);
  EXPECT_EQ(p.path, ConvPlan::Path::gather);
  EXPECT_EQ(p.path_reason, "the TMA path's packed copies of one image (34144256 bytes with the packed weight) would "
                           "not fit what the judge's workspace cap leaves for the convolution (34144255 bytes)");
  auto src = emit_conv(p, CommentText("conv2d_3x3.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_NE(src->find("#define CIG_TMA 0  // set by the seed: the TMA path's packed copies of one image"),
            std::string::npos);
  EXPECT_NE(src->find("#define CIG_TMA_CHUNK_IMAGES 0\n"), std::string::npos);
  ConvPlan grouped = conv2d_3x3();
  grouped.groups = 2;
  choose_conv_path(grouped, kWorkspaceCeiling);
  EXPECT_EQ(grouped.path, ConvPlan::Path::gather);
  EXPECT_EQ(grouped.path_reason, "groups=2 (the TMA path takes dense layers)");
}

// Few input channels and a short K: the direct path (FP32 FMA), with the channel tile that covers a group's
// output channels; more channels or a longer K stay on the gather kernel, each saying why.
TEST(ConvPath, TheDirectPathTakesFewChannelLayersWithAShortK) {
  // KernelBench 59's layer: 3 -> 64 channels, a (3, 3, 1) window: K = 27.
  ConvPlan few;
  few.dims = 3;
  few.in_channels = 3;
  few.out_channels = 64;
  few.kernel[0] = few.kernel[1] = 3;
  few.input_shape = {16, 3, 256, 256, 10};
  few.output_shape = {16, 64, 254, 254, 10};
  choose_conv_path(few, kWorkspaceCeiling);
  EXPECT_EQ(few.path, ConvPlan::Path::direct);
  EXPECT_EQ(few.direct_tile_n, 64);
  EXPECT_EQ(conv_phase_k(few), 27);
  EXPECT_EQ(few.path_reason, "3 input channels (the TMA path packs at least 8: fewer would be mostly padding)");
  EXPECT_EQ(conv_workspace_bound(few), conv_gather_workspace_bytes(few));  // the gather kernel's layout
  auto src = emit_conv(few, CommentText("59.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_NE(src->find("#define CIG_TMA 0  // set by the seed: 3 input channels"), std::string::npos);
  EXPECT_NE(src->find("#define CIG_DIRECT 1  // set by the seed: 3 input channels a group, K = 27 per phase"),
            std::string::npos);
  EXPECT_NE(src->find("#define CIG_DIRECT_TILE_N 64  // set by the seed: 64 output channels a group"),
            std::string::npos);
  EXPECT_EQ(conv_kernel_name(few), "library conv_implicit_gemm (direct)");

  // 16, 24 and 32 output channels: the 16-, 24- and 32-wide tiles (12 channels a thread at 24, no padding).
  ConvPlan narrow = few;
  for (const auto& [channels, tile] : {std::pair{16, 16}, {17, 24}, {24, 24}, {25, 32}, {32, 32}, {33, 64}}) {
    narrow.out_channels = channels;
    choose_conv_path(narrow, kWorkspaceCeiling);
    EXPECT_EQ(narrow.direct_tile_n, tile) << channels << " channels";
  }
  narrow.out_channels = 24;
  choose_conv_path(narrow, kWorkspaceCeiling);
  auto narrow_src = emit_conv(narrow, CommentText("24.py"));
  ASSERT_TRUE(narrow_src.ok()) << narrow_src.error().message;
  EXPECT_NE(narrow_src->find("#define CIG_DIRECT_TILE_N 24  // set by the seed: 24 output channels a group"),
            std::string::npos);

  // A stride-2 transposed layer: each phase's K is its own taps (2 x 2 x 2 of 3 x 3 x 3) x 3 channels = 24.
  ConvPlan phases = few;
  phases.kind = ConvPlan::Kind::transposed;
  phases.kernel[2] = 3;
  phases.stride[0] = phases.stride[1] = phases.stride[2] = 2;
  EXPECT_EQ(conv_phase_k(phases), 24);
  choose_conv_path(phases, kWorkspaceCeiling);
  EXPECT_EQ(phases.path, ConvPlan::Path::direct);

  // K up to 256 from a 32-wide tile down (a 4x4x4 window over 3 channels: 192, level 2's 27), up to 128 at 64
  // output channels; past that, and at 8 channels or more, the gather kernel.
  ConvPlan cube4 = few;
  cube4.out_channels = 16;
  cube4.kernel[0] = cube4.kernel[1] = cube4.kernel[2] = 4;
  EXPECT_EQ(conv_phase_k(cube4), 192);
  EXPECT_EQ(direct_path_refusal(cube4), "");
  choose_conv_path(cube4, kWorkspaceCeiling);
  EXPECT_EQ(cube4.path, ConvPlan::Path::direct);
  cube4.out_channels = 64;
  EXPECT_EQ(direct_path_refusal(cube4),
            "K = 192 per phase (taps x channels; the direct path keeps at most 128 in shared memory at 64 output "
            "channels)");
  ConvPlan long_k = few;
  long_k.out_channels = 32;
  long_k.kernel[0] = 3;
  long_k.kernel[1] = 5;
  long_k.kernel[2] = 7;
  EXPECT_EQ(direct_path_refusal(long_k),
            "K = 315 per phase (taps x channels; the direct path keeps at most 256 in shared memory at 32 output "
            "channels)");
  choose_conv_path(long_k, kWorkspaceCeiling);
  EXPECT_EQ(long_k.path, ConvPlan::Path::gather);
  ConvPlan grouped = conv2d_3x3();
  grouped.groups = 2;
  EXPECT_EQ(direct_path_refusal(grouped), "32 input channels a group (the direct path is for at most 8)");
  // 8 input channels, which the TMA path would pack: the direct path where it takes the layer (KernelBench level
  // 2's 8 and 67 ran 2.4x and 1.2x faster there on an H100), the TMA path where K is too long for it.
  ConvPlan eight = few;
  eight.in_channels = 8;
  eight.out_channels = 16;
  eight.kernel[2] = 3;
  eight.input_shape = {16, 8, 16, 64, 64};
  eight.output_shape = {16, 16, 14, 62, 62};
  choose_conv_path(eight, kWorkspaceCeiling);
  EXPECT_EQ(eight.path, ConvPlan::Path::direct);
  EXPECT_EQ(eight.direct_tile_n, 16);
  EXPECT_EQ(eight.path_reason,
            "8 input channels a group (the direct path is faster than the TMA path's 8-channel packing)");
  eight.kernel[0] = eight.kernel[1] = eight.kernel[2] = 5;  // K = 1000
  eight.output_shape = {16, 16, 12, 60, 60};
  choose_conv_path(eight, kWorkspaceCeiling);
  EXPECT_EQ(eight.path, ConvPlan::Path::tma_im2col);
  ConvPlan bf16 = few;
  bf16.bf16 = true;
  EXPECT_EQ(direct_path_refusal(bf16), "bf16 tensors (the direct path reads fp32)");
}

// A chain whose parts share one scratch region: the part whose TMA workspace passes what the cap leaves is made
// again as its own route's plan, with fewer images per chunk, or on the gather kernel where not one image's
// packed copies fit; a part that fits keeps its plan.
TEST(ConvPath, AChainRefitsOnlyThePartsThatDoNotFit) {
  ConvPlan large = conv2d_3x3(), small = conv2d_3x3();
  large.path = small.path = ConvPlan::Path::tma_im2col;
  small.input_shape = {1, 64, 32, 32};
  small.output_shape = {1, 128, 32, 32};
  auto parts_of = [&] {
    return std::vector<ThenStep>{{.seed = matched_plan<kConvEpilogueRoute>(large)},
                                 {.seed = matched_plan<kConvRoute>(small)}};
  };
  auto conv_of = [](const ThenStep& s) {
    const auto* typed = dynamic_cast<const TypedPlan<ConvPlan>*>(s.seed.get());
    EXPECT_TRUE(typed);
    return typed ? typed->plan() : ConvPlan{};
  };
  const int64_t intermediates = int64_t{64} << 20;
  std::vector<ThenStep> parts = parts_of();
  fit_convolution_parts(parts, intermediates, int64_t{160} << 20);  // 96 MiB left: two images (32 MiB each) per chunk
  EXPECT_EQ(parts[0].seed->route(), "conv_epilogue");
  EXPECT_EQ(conv_of(parts[0]).path, ConvPlan::Path::tma_im2col);
  EXPECT_EQ(conv_of(parts[0]).tma_chunk_images, 2);
  EXPECT_LE(then_step_scratch(*parts[0].seed) + intermediates, int64_t{256} << 20);
  EXPECT_EQ(parts[1].seed->route(), "conv");
  EXPECT_EQ(conv_of(parts[1]).path, ConvPlan::Path::tma_im2col);
  EXPECT_EQ(conv_of(parts[1]).tma_chunk_images, 0);

  parts = parts_of();
  fit_convolution_parts(parts, intermediates, intermediates + (int64_t{30} << 20));  // 30 MiB: not one image
  EXPECT_EQ(parts[0].seed->route(), "conv_epilogue");
  EXPECT_EQ(conv_of(parts[0]).path, ConvPlan::Path::gather);
  EXPECT_TRUE(conv_of(parts[0]).path_reason.starts_with("the TMA path's packed copies of one image"))
      << conv_of(parts[0]).path_reason;
  EXPECT_EQ(conv_of(parts[1]).path, ConvPlan::Path::tma_im2col);
}

// The run's precision policy reaches every copy of the library convolution a seed embeds (a chain can hold
// several); strict leaves the file's own line.
TEST(ConvPrecision, EveryEmbeddedConvolutionTakesTheRunsPolicy) {
  auto one = emit_conv(conv2d_3x3(), CommentText("conv2d_3x3.py"));
  ASSERT_TRUE(one.ok()) << one.error().message;
  const std::string two = *one + *one;
  std::string strict = two, tf32 = two, bf16 = two;
  EXPECT_EQ(set_precision_lines(strict, Precision::strict), 0);
  EXPECT_EQ(strict, two);
  EXPECT_EQ(set_precision_lines(tf32, Precision::tf32), 2);
  EXPECT_EQ(tf32.find("\n#define CIG_PRECISION 0\n"), std::string::npos);
  EXPECT_NE(tf32.find("\n#define CIG_PRECISION 1  // set by the seed: the run's --precision tf32 (the TMA path's "
                      "products)\n"),
            std::string::npos);
  EXPECT_EQ(set_precision_lines(bf16, Precision::bf16), 2);
  EXPECT_NE(bf16.find("\n#define CIG_PRECISION 2  // set by the seed: the run's --precision bf16"), std::string::npos);
  std::string again = tf32;
  EXPECT_EQ(set_precision_lines(again, Precision::tf32), 0);  // nothing left to set
}

}  // namespace
}  // namespace cutegen::seed
