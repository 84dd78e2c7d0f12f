#pragma once
// The depthwise_conv route's plan (depthwise_conv_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/plan_parts.h"

namespace cutegen::seed {

// A depthwise convolution (nn.Conv1d..3d with groups = in_channels = out_channels) of a contiguous fp32
// input: every (N, C) plane convolved with its channel's window of weights, plus the channel's bias; the
// window geometry is PyTorch's, spatial sizes padded to (D, H, W) with size-1 dimensions as a pooling's.
struct DepthwiseConvPlan {
  int dims = 2;
  int64_t batch = 1, channels = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int num_contract_inputs = 0;
  int input = 0;
  int weight_input = -1;  // contract position of the (C, 1, k...) weight
  int bias_input = -1;    // of the (C) bias, -1 without one
  std::string pattern;
};

}  // namespace cutegen::seed
