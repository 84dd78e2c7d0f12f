#pragma once
// The conv route's plan (conv_route.h).
#include <cstdint>
#include <string>

namespace cutegen::seed {

// A dense, grouped or transposed convolution (nn.Conv1d..3d, nn.ConvTranspose1d..3d) of a contiguous fp32
// forward input, run by the library's implicit-GEMM convolution (examples/kernels/conv_implicit_gemm.cu).
// What the shapes cannot tell the kernel -- the window's stride, padding and dilation, the groups and
// whether it is transposed -- is its `kSpec` line; per dimension in (D, H, W) order, right-aligned, a
// missing dimension stride 1, padding 0, dilation 1.
struct ConvPlan {
  enum class Kind { forward, transposed };
  Kind kind = Kind::forward;
  int dims = 2;
  int64_t groups = 1, in_channels = 1, out_channels = 1;
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int64_t output_padding[3] = {0, 0, 0};  // transposed only; the kernel reads it from the output's shape
  bool has_bias = false;
  std::string pattern;  // conv_transpose2d(x, conv_weight, stride=2, ...)
};

}  // namespace cutegen::seed
