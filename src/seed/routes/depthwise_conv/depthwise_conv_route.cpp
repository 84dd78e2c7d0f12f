#include "seed/routes/depthwise_conv/depthwise_conv_route.h"

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/window.h"
#include "seed/routes/depthwise_conv/depthwise_conv_kernel.h"

namespace cutegen::seed {

Result<DepthwiseConvPlan> match_depthwise_conv(const OpGraph& g) {
  auto conv = convolution_of_input(g);
  if (!conv) return conv.error();
  const Node* out = *conv;
  const Node& x = g.node(*out->args[0].ref);
  const double* dims = number(*out, "dims");
  const double* groups = number(*out, "groups");
  const double* in_channels = number(*out, "in_channels");
  const double* out_channels = number(*out, "out_channels");
  if (!dims || !groups || !in_channels || !out_channels || *dims < 1 || *dims > 3) {
    return Error{"a convolution without its geometry (dims, groups, channels)"};
  }
  if (*groups != *in_channels || *out_channels != *in_channels) {
    return Error{*groups == 1 ? "a dense convolution (groups=1): only depthwise convolutions (groups = channels) have a seed"
                          : fmt::format("a grouped convolution (groups={}, {} -> {} channels): only depthwise ones "
                                        "(groups = in = out channels) have a seed",
                                        *groups, *in_channels, *out_channels)};
  }
  const auto& in = x.type->shape;
  const auto& os = out->type->shape;
  if (x.type->dtype != "float32" || in.size() != static_cast<std::size_t>(*dims) + 2 || os.size() != in.size() ||
      in[1] != static_cast<int64_t>(*in_channels)) {
    return Error{fmt::format("a depthwise convolution of a {} {}-d input (the seed takes float32 (N, C, spatial...))",
                         x.type->dtype, in.size())};
  }
  DepthwiseConvPlan plan{.dims = static_cast<int>(*dims), .batch = in[0], .channels = in[1],
                         .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()), .input = x.index};
  auto param = [&](std::size_t at, const char* what, const Node*& p) -> Status {
    if (at >= out->args.size() || !out->args[at].ref || g.node(*out->args[at].ref).op != Op::param) {
      return Error{fmt::format("the convolution's {} is not one of the model's parameters", what)};
    }
    p = &g.node(*out->args[at].ref);
    if (!p->type || p->type->dtype != "float32" || !p->type->contiguous) {
      return Error{fmt::format("the convolution's {} is not a contiguous float32 parameter", what)};
    }
    return ok_status();
  };
  const Node* weight = nullptr;
  const Node* bias = nullptr;
  if (auto s = param(1, "weight", weight); !s) return s.error();
  if (flag(*out, "has_bias")) {
    if (auto s = param(2, "bias", bias); !s) return s.error();
  }
  plan.weight_input = weight->index;
  plan.bias_input = bias ? bias->index : -1;
  for (int i = 0; i < plan.dims; ++i) {
    const int slot = 3 - plan.dims + i;  // right-aligned into (D, H, W)
    plan.in[slot] = in[2 + static_cast<std::size_t>(i)];
    plan.out[slot] = os[2 + static_cast<std::size_t>(i)];
  }
  if (auto s = read_window(*out, plan.dims, plan.kernel, plan.stride, plan.padding, plan.dilation, "the convolution"); !s)
    return s.error();
  const int64_t window = plan.kernel[0] * plan.kernel[1] * plan.kernel[2];
  if (weight->type->shape.empty() || weight->type->shape[0] != plan.channels || product(weight->type->shape, 0, weight->type->shape.size()) != plan.channels * window) {
    return Error{"the depthwise convolution's weight is not (channels, 1, window...)"};
  }
  if (bias && product(bias->type->shape, 0, bias->type->shape.size()) != plan.channels) {
    return Error{"the depthwise convolution's bias is not one value per channel"};
  }
  // conv2d(x, weight, bias, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=64)
  plan.pattern = fmt::format("conv{}d({}, {}{}, stride={}, padding={}, dilation={}, groups={})", plan.dims, x.name,
                             weight->name, bias ? ", " + bias->name : std::string(), per_dim(plan.stride, plan.dims),
                             per_dim(plan.padding, plan.dims), per_dim(plan.dilation, plan.dims), plan.channels);
  return plan;
}


std::string depthwise_conv_description(const DepthwiseConvPlan& plan) { return "depthwise convolution y = " + plan.pattern; }

std::string depthwise_conv_pattern(const DepthwiseConvPlan& plan) { return plan.pattern; }

Result<std::string> emit_depthwise_conv(const DepthwiseConvPlan& plan, const CommentText& problem) { return generate_depthwise_conv_kernel(plan, problem); }

}  // namespace cutegen::seed
