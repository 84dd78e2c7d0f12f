#pragma once
// The conv_stats route's plan (conv_stats_route.h).
#include <cstdint>
#include <string>
#include <vector>

#include "seed/routes/conv/conv_plan.h"

namespace cutegen::seed {

// A convolution (with its pointwise epilogue) on the direct path, maybe a GroupNorm, InstanceNorm or
// training-mode BatchNorm of its result y, then the mean over y's spatial dimensions (one value per (image,
// channel)) or over its channels too (one per image). The mean of a normalised plane is the normalisation of the
// plane's mean, so the output follows from each (image, channel)'s sum and sum of squares of y: the convolution
// gathers those in its epilogue and y is never stored.
struct ConvStatsPlan {
  ConvPlan conv;                 // the convolution and its epilogue, on the direct path
  bool has_norm = true;          // false: the mean of y itself (a global average pooling)
  bool batch_norm = false;       // statistics per channel over the batch; else per (image, channel group)
  int64_t norm_groups = 0;       // GroupNorm's groups; 0: InstanceNorm's one a channel
  double eps = 1e-5;
  int norm_weight = -1, norm_bias = -1;  // contract inputs of the norm's affine parameters, -1: none
  bool over_channels = false;    // the mean is over the channels as well as the spatial dimensions
  int num_contract_inputs = 0;
  std::vector<int64_t> y_shape;  // the convolution's output as traced
  std::vector<int64_t> output_shape;
  std::string norm_pattern, mean_pattern, conv_pattern;
};

}  // namespace cutegen::seed
