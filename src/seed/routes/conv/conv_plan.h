#pragma once
// The conv route's plan (conv_route.h), shared by the conv_epilogue route (conv_epilogue_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/plan_parts.h"

namespace cutegen::seed {

// An operand of a convolution's epilogue: a contract input read as one value per output channel (a (C, 1, 1)
// parameter), one number (a 0-d or one-element tensor) or one value per output element (a tensor of the
// output's shape).
struct ConvEpilogueOperand {
  enum class Reads { channel, number, element };
  int input = 0;  // contract position
  Reads reads = Reads::channel;
  std::string name;
};

// A dense, grouped or transposed convolution (nn.Conv1d..3d, nn.ConvTranspose1d..3d) of a contiguous fp32
// forward input, run by the library's implicit-GEMM convolution (library/conv_implicit_gemm.cu).
// What the shapes cannot tell the kernel -- the window's stride, padding and dilation, the groups and
// whether it is transposed -- is its `kSpec` line; per dimension in (D, H, W) order, right-aligned, a
// missing dimension stride 1, padding 0, dilation 1.
// With an epilogue (conv_epilogue): each output value y, the convolution plus its bias in fp32, becomes
// `result` through `epilogue`'s statements over y and the operands e0, e1, ... before it is stored.
struct ConvPlan {
  enum class Kind { forward, transposed };
  // The library kernel's paths (its CIG_TMA and CIG_DIRECT knobs, which the seed sets): CUTLASS's SM90
  // implicit-GEMM convolution over TMA-im2col loads of a packed copy of the input, for dense forward layers and
  // stride-1 transposed ones; the direct path (FP32 FMA) for layers of at most 8 input channels whose K per
  // phase fits its shared memory (direct_max_k); and the gather kernel, for everything else and wherever even one image's packed
  // copies would not fit the judge's workspace cap.
  enum class Path { tma_im2col, gather, direct };
  Kind kind = Kind::forward;
  Path path = Path::gather;
  std::string path_reason;  // why not the TMA path, where it is not ("groups=4: the TMA path takes dense layers")
  // On the TMA path: images per chunk of its packed copies where the library's own choice (about 1 GiB) would
  // not fit the workspace the judge's cap leaves (the kernel's CIG_TMA_CHUNK_IMAGES); 0: the library's.
  int64_t tma_chunk_images = 0;
  // On the TMA path: [big | small] operand pairs (CIG_TMA_PAIRED) where the input channels fill whole 32-channel
  // blocks, and the narrowest output tile (CIG_TMA_TILE_N: 16, 32, 64 or 128) that covers a group's channels.
  bool tma_paired = false;
  int tma_tile_n = 128;
  // Shared-memory stages there (CIG_TMA_STAGES): 0 fills shared memory (one CTA per SM); 4 where a tile of 64 or
  // fewer (~73 registers a thread at 64) lets three or more CTAs, so consumer warpgroups, share an SM.
  int tma_stages = 0;
  // CTAs per SM the TMA path's kernel is compiled for (CIG_TMA_MIN_CTAS): 2, with 4 stages, at the 64 x 128 tile,
  // so that one CTA's epilogue runs beside another's mainloop.
  int tma_min_ctas = 1;
  // On the direct path: output channels per CTA (CIG_DIRECT_TILE_N), the smallest of 16, 32, 64 that covers a
  // group's channels.
  int direct_tile_n = 64;
  // The input, weight, bias and output are bf16 (the kernel's CIG_IO_BF16): the TMA path with bf16 operands, or no
  // seed. Only the plain conv route makes such plans.
  bool bf16 = false;
  std::vector<int64_t> input_shape, output_shape;  // x's (N, C, spatial...) and the convolution's
  int dims = 2;
  int64_t groups = 1, in_channels = 1, out_channels = 1;
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int64_t output_padding[3] = {0, 0, 0};  // transposed only; the kernel reads it from the output's shape
  bool has_bias = false;
  // Contract positions of the convolved input, the weight and the bias (-1: none), and how many inputs the
  // contract passes; the emitter sets the kernel's kInputs line from them. 0 inputs: the library's own
  // reading, (x, weight[, bias]) at 0, 1, 2, which the plain conv route leaves as it is where the problem's
  // inputs are just those.
  int x_input = 0, weight_input = 1, bias_input = -1;
  int num_contract_inputs = 0;
  std::vector<ConvEpilogueOperand> operands;
  std::vector<PointwiseStep> epilogue;
  std::string result = "y";
  // conv_transpose2d(x, conv_weight, stride=2, ...); with an epilogue "relu(y) + bias, y = conv2d(...)"
  std::string pattern;
  bool has_epilogue() const { return !epilogue.empty() || !operands.empty(); }
};

}  // namespace cutegen::seed
