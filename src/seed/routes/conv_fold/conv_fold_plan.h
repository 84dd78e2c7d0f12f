#pragma once
// The conv_fold route's plan (conv_fold_route.h).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "seed/routes/conv/conv_plan.h"
#include "seed/routes/then/then_chain.h"

namespace cutegen::seed {

// A convolution, an epilogue affine in its value (per-channel operands and numbers), then the sum or mean over
// every spatial dimension: by linearity the reduction moves through the convolution, so no convolution is run.
// The sum over the output positions of output channel o is sum_c sum_t W(c, o, t) B(n, c, t) plus the bias times
// the positions, where B(n, c, t) is the sum of the input plane (n, c) over the box of input positions that tap t
// carries into the output: per spatial dimension a contiguous interval (a transposed convolution of any stride,
// padding and dilation; a forward one of stride 1). Those intervals cut each dimension into a few segments; one
// CTA per input plane sums each box of segments once, and a second kernel (a warp per output) weighs them.
struct ConvFoldPlan {
  ConvPlan conv;                         // the convolution and the affine epilogue (conv_epilogue's plan)
  bool mean = false;                     // else a sum
  int64_t positions = 1;                 // the convolution's output positions (the mean divides by them)
  // Per spatial slot (D, H, W, right-aligned as ConvPlan's; a missing dimension is one position): the input's
  // cut points (0 first, the dimension's size last) and, per tap, the first and last segment it covers
  // (first > last: the tap carries nothing into the output).
  std::array<std::vector<int64_t>, 3> cuts;
  std::array<std::vector<std::array<int, 2>>, 3> tap_segments;
  std::vector<int64_t> reduced_shape;    // the reduction's result: (N, C, 1...) or (N, C)
  std::vector<ThenStep> steps;           // the rest of forward() after the reduction; none when it is the output
  int num_contract_inputs = 0;
  int num_forward_inputs = 0;            // the problem's forward() arguments: where a step's extra reads go
  std::vector<int64_t> input_shape, output_shape;
  std::string pattern;                   // mean over (2, 3) of <epilogue>, y = conv_transpose2d(...)
  int segments() const {
    int n = 1;
    for (const auto& c : cuts) n *= static_cast<int>(c.size()) - 1;
    return n;
  }
};

}  // namespace cutegen::seed
