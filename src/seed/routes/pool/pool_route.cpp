#include "seed/routes/pool/pool_route.h"

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/store_epilogue.h"
#include "seed/window.h"
#include "seed/routes/pool/pool_kernel.h"

namespace cutegen::seed {

Result<PoolPlan> match_pool(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  if ((out->op != Op::max_pool && out->op != Op::avg_pool) || out->args.size() != 1 || !out->type) {
    return Error{fmt::format("the output is {}, not a pooling of an input", out->op)};
  }
  if (auto why = plain_input(g, out->args[0], "the pooled tensor"); !why.empty()) return Error{why};
  PoolPlan plan{.max = out->op == Op::max_pool, .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const Node& x = g.node(*out->args[0].ref);
  plan.input = x.index;
  const double* dims = number(*out, "dims");
  const auto& in = x.type->shape;
  const auto& os = out->type->shape;
  if (!dims || *dims < 1 || *dims > 3 || in.size() < static_cast<std::size_t>(*dims) + 1 || os.size() != in.size()) {
    return Error{fmt::format("{} of a {}-d input", out->op, in.size())};
  }
  if (flag(*out, "return_indices")) {
    return Error{"max_pool with return_indices (two outputs)"};
  }
  plan.dims = static_cast<int>(*dims);
  const std::size_t first = in.size() - static_cast<std::size_t>(plan.dims);
  plan.planes = product(in, 0, first);
  for (int i = 0; i < plan.dims; ++i) {
    const int slot = 3 - plan.dims + i;  // right-aligned into (D, H, W)
    plan.in[slot] = in[first + static_cast<std::size_t>(i)];
    plan.out[slot] = os[first + static_cast<std::size_t>(i)];
  }
  if (auto s = read_window(*out, plan.dims, plan.kernel, plan.stride, plan.padding, plan.dilation, out->op.spelling());
      !s)
    return s.error();
  if (!plan.max) {
    plan.count_include_pad = !out->params.count("count_include_pad") || flag(*out, "count_include_pad");
    const double* divisor = number(*out, "divisor_override");
    plan.divisor_override = divisor ? static_cast<int64_t>(*divisor) : 0;
  }
  // max_pool2d(x, kernel=(4, 4), stride=(1, 1), padding=(1, 1), dilation=(1, 1)): the module as people write it.
  plan.pattern = fmt::format("{}{}d({}, kernel={}, stride={}, padding={}", out->op, plan.dims, x.name,
                             per_dim(plan.kernel, plan.dims), per_dim(plan.stride, plan.dims),
                             per_dim(plan.padding, plan.dims));
  if (plan.max) plan.pattern += fmt::format(", dilation={}", per_dim(plan.dilation, plan.dims));
  if (flag(*out, "ceil_mode")) plan.pattern += ", ceil_mode=True";
  if (!plan.max && !plan.count_include_pad) plan.pattern += ", count_include_pad=False";
  if (plan.divisor_override) plan.pattern += fmt::format(", divisor_override={}", plan.divisor_override);
  plan.pattern += ")";
  return plan;
}


std::string pool_description(const PoolPlan& plan) {
  return "pooling y = " + plan.pattern + epilogue_description(plan.epilogue);
}

std::string pool_pattern(const PoolPlan& plan) { return plan.pattern + epilogue_pattern(plan.epilogue); }

Result<std::string> emit_pool(const PoolPlan& plan, const CommentText& problem) { return generate_pool_kernel(plan, problem); }

}  // namespace cutegen::seed
