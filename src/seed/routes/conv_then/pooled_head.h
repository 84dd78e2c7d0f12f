#pragma once
// conv_then's pooled head (docs/seed.md, "A convolution, then more seeds"): an average pooling of a forward
// convolution's result -- or of ops affine in it with per-channel or single operands, which commute with it -- is
// itself a convolution of the same input. Per dimension, with the convolution's k taps, stride s and dilation d
// and the pooling's window kp and stride sp (no padding, floor mode):
//   pool(conv(x))[q] = 1/kp * sum_j sum_t W[t] x[(q sp + j) s + t d - pad] = sum_u W'[u] x[q (sp s) + u - pad],
//   W'[u] = 1/kp * sum of W[t] over the window positions j and taps t with j s + t d = u,
// a convolution with stride sp s, dilation 1, padding pad and (kp - 1) s + (k - 1) d + 1 taps, whose output size is
// exactly the pooled one. So the library convolution runs on W', computed per call into the workspace from the
// weight, at the pooled output's size: the unpooled result (KernelBench level 2's 65: 4.8 GB) is never stored, and
// each pooled value costs k'^dims taps instead of (kp k)^dims (65: 36 instead of 144).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "seed/op_graph.h"
#include "seed/routes/conv/conv_plan.h"

namespace cutegen::seed {

struct PooledHead {
  int pool = -1;  // the avg_pool node: the head's result is its value
  int dims = 2;
  int64_t pool_kernel[3] = {1, 1, 1}, pool_stride[3] = {1, 1, 1};  // right-aligned into (D, H, W)
  // Per slot (D, H, W): for each tap u of the folded kernel, the original taps t it gathers (a missing dimension:
  // one tap gathering tap 0).
  std::array<std::vector<std::vector<int>>, 3> taps;
  std::string pool_pattern;  // avg_pool2d(y, kernel=(4, 4), stride=(4, 4))
};

// One dimension's folded taps: for u in [0, (kp - 1) s + (k - 1) d + 1), the taps t in [0, k) with
// u = j s + t d for some window position j in [0, kp), in ascending order.
std::vector<std::vector<int>> folded_taps(int64_t k, int64_t stride, int64_t dilation, int64_t pool_kernel);

// Whether the head's value `split` -- the convolution `conv`, then the pointwise ops of `head` (its conv_epilogue
// plan) -- is read by nothing but an average pooling that folds into the weights: a forward fp32 convolution, ops
// affine in it whose operands are per channel or single numbers, an avg_pool over all its spatial dimensions
// without padding, ceil_mode or divisor_override, and a folded kernel of at most 16 taps per dimension (the
// library convolution's). Error: why not.
Result<PooledHead> match_pooled_head(const OpGraph& g, const Node& conv, int split, const ConvPlan& head);

// `head` with the pooling folded in: its kernel, stride and dilation the folded convolution's, its output the
// pooled shape, its pattern naming the pooling.
ConvPlan folded_conv_plan(const ConvPlan& head, const PooledHead& p, const std::vector<int64_t>& pooled_shape);

// The folded weight's bytes (fp32, rounded up to 256): what the head asks before the convolution's workspace.
int64_t folded_weight_bytes(const ConvPlan& folded);

// The text after the library convolution's (whose entry points are conv_workspace_bytes and conv_forward_ws): the
// kernel that folds the weight and the head's pooled_workspace_bytes / pooled_forward_ws, which the chain calls.
// `original` is the convolution as traced (its weight's shape), `folded` folded_conv_plan's result.
std::string pooled_head_text(const ConvPlan& original, const ConvPlan& folded, const PooledHead& p);

}  // namespace cutegen::seed
