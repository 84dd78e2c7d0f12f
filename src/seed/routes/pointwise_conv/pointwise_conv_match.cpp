#include "seed/routes/pointwise_conv/pointwise_conv_route.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/window.h"

namespace cutegen::seed {

Result<GemmPlan> match_pointwise_conv(const OpGraph& g) {
  auto conv = convolution_of_input(g);
  if (!conv) return conv.error();
  const Node* out = *conv;
  const Node& x = g.node(*out->args[0].ref);
  const double* dims = number(*out, "dims");
  const double* groups = number(*out, "groups");
  if (!dims || !groups || *groups != 1) {
    return Error{"not a dense convolution (groups=1)"};
  }
  std::vector<int64_t> window;
  bool pointwise = true;
  for (int i = 0; i < static_cast<int>(*dims); ++i) {
    const double* k = number(*out, fmt::format("k{}", i).c_str());
    const double* st = number(*out, fmt::format("s{}", i).c_str());
    const double* p = number(*out, fmt::format("p{}", i).c_str());
    window.push_back(k ? static_cast<int64_t>(*k) : 0);
    pointwise = pointwise && k && st && p && *k == 1 && *st == 1 && *p == 0;
  }
  if (!pointwise) {
    return Error{fmt::format("a dense convolution with a {} window: only depthwise (groups = channels) and pointwise "
                         "(1x1, stride 1, no padding) convolutions have a seed", fmt::join(window, "x"))};
  }
  if (flag(*out, "has_bias")) {
    return Error{"a pointwise convolution with a bias (a per-output-channel bias in the GEMM's epilogue is future work)"};
  }
  const auto& in = x.type->shape;
  const auto& os = out->type->shape;
  if (x.type->dtype != "float32" || in.size() != static_cast<std::size_t>(*dims) + 2 || os.size() != in.size()) {
    return Error{fmt::format("a pointwise convolution of a {} {}-d input (the seed takes float32 (N, C, spatial...))",
                         x.type->dtype, in.size())};
  }
  const Node* weight = out->args[1].ref ? &g.node(*out->args[1].ref) : nullptr;
  if (!weight || weight->op != Op::param || !weight->type || weight->type->dtype != "float32" ||
      !weight->type->contiguous) {
    return Error{"the convolution's weight is not a contiguous float32 parameter"};
  }
  const int64_t spatial = product(in, 2, in.size());
  GemmPlan plan{.batch = in[0], .m = os[1], .n = spatial, .k = in[1],
                .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  if (product(weight->type->shape, 0, weight->type->shape.size()) != plan.m * plan.k ||
      product(os, 2, os.size()) != spatial) {
    return Error{"a pointwise convolution whose weight or output does not have the shapes of one"};
  }
  // y[n] (C_out x spatial) = W (C_out x C_in) @ x[n] (C_in x spatial): W is A, shared by the batch.
  plan.a_input = weight->index;
  plan.b_input = x.index;
  plan.a_batch_stride = 0;
  plan.b_batch_stride = plan.k * plan.n;
  plan.pattern = fmt::format("conv{}d({}, {}) (1x1: {} @ {} per batch element)", static_cast<int>(*dims), x.name,
                             weight->name, weight->name, x.name);
  return plan;
}


}  // namespace cutegen::seed
