#include "seed/routes/broadcast/broadcast_route.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/pointwise_ops.h"
#include "seed/routes/broadcast/broadcast_kernel.h"

namespace cutegen::seed {

Result<BroadcastPlan> match_broadcast(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  if (!out->type || out->type->dtype != "float32" || out->op == Op::input) {
    return Error{"the broadcast seed writes a float32 tensor computed from its inputs"};
  }
  BroadcastPlan plan{.shape = out->type->shape, .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const std::size_t rank = plan.shape.size();
  // Leaves: inputs and parameters, and views of them (`b.unsqueeze(1)`, `p.view(1, -1, 1, 1, 1)`: the same
  // contiguous values in another shape), each with the shape it is used at.
  std::map<int, std::string> leaves;
  std::map<int, std::pair<const Node*, std::vector<int64_t>>> leaf_data;
  std::set<int> seen;
  std::vector<int> stack{out->id};
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const Node& n = g.node(id);
    const Node* data = nullptr;
    if (n.op == Op::input || n.op == Op::param) data = &n;
    if (n.op == Op::unsqueeze && n.args.size() == 1 && n.args[0].ref && g.node(*n.args[0].ref).op == Op::input) {
      data = &g.node(*n.args[0].ref);
    } else if (is_view_op(n)) {
      const Node& viewed = through_views(g, n);
      if (viewed.op == Op::input || viewed.op == Op::param) data = &viewed;
    }
    if (data) {
      if (data->scalar || !data->type || data->type->dtype != "float32" || !data->type->contiguous || !n.type) {
        return Error{fmt::format("{} is not a contiguous float32 tensor", data->name)};
      }
      const auto& s = n.type->shape;
      bool fits = s.size() <= rank;
      for (std::size_t i = 0; fits && i < s.size(); ++i) {
        const int64_t o = plan.shape[rank - s.size() + i];
        fits = s[i] == o || s[i] == 1;
      }
      if (!fits) {
        return Error{fmt::format("{} does not broadcast to the output", n.name)};
      }
      leaves[id] = "";
      leaf_data[id] = {data, s};
      continue;
    }
    if (n.op == Op::unsqueeze) {
      return Error{"an unsqueeze of a computed value"};
    }
    for (const auto& a : n.args)
      if (a.ref) stack.push_back(*a.ref);
  }
  for (auto& [id, name] : leaves) {
    name = fmt::format("x{}", plan.inputs.size());
    const auto& [data, s] = leaf_data[id];
    plan.inputs.push_back(data->index);
    plan.sizes.push_back(product(s, 0, s.size()));
    plan.names.push_back(data->name);
    std::vector<int64_t> strides(rank, 0);
    int64_t step = 1;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] != 1) strides[rank - s.size() + i] = step;
      step *= s[i];
    }
    plan.strides.push_back(strides);
  }
  if (plan.inputs.empty()) {
    return Error{"the output depends on no input tensor"};
  }
  auto result = emit_chain(g, out->id, leaves, "v", plan.steps);
  if (!result) return result.error();
  plan.result = *result;
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}


std::string broadcast_description(const BroadcastPlan& plan) { return "broadcast pointwise chain y = " + plan.pattern; }

std::string broadcast_pattern(const BroadcastPlan& plan) { return plan.pattern; }

Result<std::string> emit_broadcast(const BroadcastPlan& plan, const CommentText& problem) { return generate_broadcast_kernel(plan, problem); }

}  // namespace cutegen::seed
