#pragma once
// The structured seed patterns (docs/seed.md): a reduction over one dimension, a normalisation (LayerNorm,
// GroupNorm, InstanceNorm, training-mode BatchNorm, and x / f(reduce(g(x))) such as RMS, L1, L2 and
// Frobenius norms), and the matrix-product family. Each returns its plan, or nullopt with `reason` set
// when the graph has the pattern's ops but not a shape the seed handles.
#include <optional>
#include <string>

#include "seed/op_graph.h"
#include "seed/plans.h"

namespace cutegen::seed {

// Ops that make each matcher the one whose reason is worth reading.
bool is_reduce_op(const std::string& op);
bool is_norm_op(const std::string& op);
bool is_gemm_op(const std::string& op);
bool is_loss_op(const std::string& op);
bool is_scan_op(const std::string& op);
bool is_pool_op(const std::string& op);
bool is_conv_op(const std::string& op);
// The graph's output is a convolution with groups=1 (a dense one: the pointwise seed's, when 1x1).
bool is_dense_convolution(const OpGraph& g);

std::optional<ReducePlan> match_reduce(const OpGraph& g, std::string& reason);
std::optional<NormPlan> match_norm(const OpGraph& g, std::string& reason);
std::optional<GemmPlan> match_gemm(const OpGraph& g, std::string& reason);
// The operands of one matmul node (inputs or parameters, each optionally transposed in its last two
// dimensions) into plan's shapes and positions; false with the reason when the seed GEMM cannot take them.
bool match_matmul(const OpGraph& g, const Node& mm, GemmPlan& plan, std::string& reason);
// The sum or mean of everything of a pointwise chain (MSE written out), or a loss function
// (mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div) with reduction mean, sum or batchmean.
std::optional<LossPlan> match_loss(const OpGraph& g, std::string& reason);
// cumsum/cumprod of an input over one dimension, or flip(cumsum(flip(x, d), d), d) (a reverse scan).
std::optional<ScanPlan> match_scan(const OpGraph& g, std::string& reason);
// nn.MaxPool1d..3d / nn.AvgPool1d..3d of an input (the worker gives the window per dimension).
std::optional<PoolPlan> match_pool(const OpGraph& g, std::string& reason);
// nn.Conv1d..3d with groups = in_channels = out_channels of an input (the worker gives the window per
// dimension, the weight and the bias as parameters). A dense or grouped convolution says so.
std::optional<DepthwiseConvPlan> match_depthwise_conv(const OpGraph& g, std::string& reason);
// nn.Conv1d..3d with groups=1, a window of 1, stride 1 and no padding or bias (a pointwise convolution) as
// the batched product y[n] = W (C_out x C_in) @ x[n] (C_in x spatial), the weight shared by the batch.
std::optional<GemmPlan> match_pointwise_conv(const OpGraph& g, std::string& reason);
// A float32 pointwise chain whose tensor operands (inputs, or unsqueezes of inputs) broadcast to the output.
std::optional<BroadcastPlan> match_broadcast(const OpGraph& g, std::string& reason);
// F.cross_entropy(logits, targets) of a (B, C) fp32 input and (B,) int64 class indices, no weight or smoothing.
std::optional<CrossEntropyPlan> match_cross_entropy(const OpGraph& g, std::string& reason);

}  // namespace cutegen::seed
