#pragma once
// The separable_conv route's plan (separable_conv_route.h).
#include <cstdint>
#include <string>

#include "seed/routes/conv/conv_plan.h"
#include "seed/routes/depthwise_conv/depthwise_conv_plan.h"

namespace cutegen::seed {

// A convolution of a depthwise convolution (KernelBench's depthwise-separable convolution: a depthwise
// window, then a 1x1 convolution mixing the channels): the depthwise route's kernel writes the intermediate
// (N, C, spatial...) into the workspace and the library's implicit-GEMM convolution reads it from there.
struct SeparableConvPlan {
  DepthwiseConvPlan depthwise;  // of the forward input
  ConvPlan second;              // of the intermediate; its weight and bias positions are the contract's
  int64_t intermediate_bytes = 0;
  std::string pattern;  // conv2d(y, pointwise_weight, ...), y = conv2d(x, depthwise_weight, ..., groups=64)
};

}  // namespace cutegen::seed
