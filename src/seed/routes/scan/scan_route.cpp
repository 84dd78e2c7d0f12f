#include "seed/routes/scan/scan_route.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/pointwise_ops.h"
#include "seed/routes/scan/exclusive_scan.h"
#include "seed/routes/scan/scan_kernel.h"

namespace cutegen::seed {

Result<ScanPlan> match_scan(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  ScanPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const Node* scan = out;
  std::optional<int64_t> flip_dim;
  // flip(scan(flip(x, d), d), d): the same scan read from the end.
  auto flip_of = [&](const Node& n) -> const Node* {
    if (n.op != Op::flip || n.args.size() != 1 || !n.args[0].ref || !n.type) return nullptr;
    auto d = dim_of(n, n.type->shape.size(), "dims");
    if (!d || *d < 0 || (flip_dim && *flip_dim != *d)) return nullptr;
    flip_dim = *d;
    return &g.node(*n.args[0].ref);
  };
  std::optional<int> exclusive_source;  // x of an exclusive cumsum written with torch.cat
  if (out->op == Op::cat) {
    auto exclusive = match_exclusive_cat(g, *out);
    if (!exclusive) return exclusive.error();
    scan = exclusive->scan;
    exclusive_source = exclusive->source;
  } else if (out->op == Op::flip) {
    scan = flip_of(*out);
    if (!scan) {
      return Error{"a flip of other than one dimension"};
    }
    plan.reverse = true;
  }
  if ((scan->op != Op::cumsum && scan->op != Op::cumprod) || scan->args.size() != 1) {
    return Error{fmt::format("the output is {}, not a scan of an input", scan->op)};
  }
  if (!is_none(*scan, "dtype")) {
    return Error{fmt::format("{} with a dtype argument", scan->op)};
  }
  Operand source = scan->args[0];
  if (exclusive_source) {
    source = Operand{.ref = *exclusive_source};
    plan.exclusive = true;
  } else if (!plan.reverse && source.ref && scan->type) {
    // cumsum of x shifted one position along its dim: the exclusive cumsum of x.
    auto d = dim_of(*scan, scan->type->shape.size());
    auto shifted = d ? shifted_source(g, g.node(*source.ref), *d) : std::nullopt;
    if (shifted && scan->op == Op::cumprod) {
      return Error{"a cumprod of a value shifted by zeros (the seed's exclusive scan is a cumsum)"};
    }
    if (shifted) {
      source = Operand{.ref = *shifted};
      plan.exclusive = true;
    }
  }
  if (plan.reverse) {
    const Node* inner = source.ref ? flip_of(g.node(*source.ref)) : nullptr;
    if (!inner) {
      return Error{"a flipped scan whose input is not flipped back over the same dimension"};
    }
    source = Operand{.ref = inner->id};
  }
  if (!source.ref || !g.node(*source.ref).type) {
    return Error{fmt::format("{} of a number", scan->op)};
  }
  const Node& x = g.node(*source.ref);
  const auto shape = x.type->shape;
  if (x.op == Op::input) {
    if (auto why = plain_input(g, source, "the scanned tensor"); !why.empty()) return Error{why};
    plan.inputs = {x.index};
    plan.dtypes = {"float32"};
    plan.names = {x.name};
  } else {
    // A pointwise chain of inputs of the scanned shape, read as it is scanned (masked cumsum: x * mask).
    if (plan.reverse) {
      return Error{"a reverse scan of a computed value"};
    }
    std::map<int, std::string> leaves;
    std::set<int> seen;
    std::vector<int> stack{x.id};
    while (!stack.empty()) {
      int id = stack.back();
      stack.pop_back();
      if (!seen.insert(id).second) continue;
      const Node& n = g.node(id);
      if (n.op == Op::input || n.op == Op::param) {
        if (n.scalar || !n.type || n.type->shape != shape || !n.type->contiguous ||
            (n.type->dtype != "float32" && n.type->dtype != "bool")) {
          return Error{fmt::format("{} of a chain that reads {} (the scan seed's chains read contiguous float32 or bool "
                               "tensors of the scanned shape)",
                               scan->op, n.name)};
        }
        leaves[id] = "";
        continue;
      }
      for (const auto& a : n.args)
        if (a.ref) stack.push_back(*a.ref);
    }
    for (auto& [id, name] : leaves) {
      name = fmt::format("x{}", plan.inputs.size());
      const Node& n = g.node(id);
      plan.inputs.push_back(n.index);
      plan.dtypes.push_back(n.type->dtype);
      plan.names.push_back(n.name);
    }
    if (!x.type || x.type->dtype != "float32") {
      return Error{fmt::format("{} of a {} value (this seed is float32)", scan->op, x.type ? x.type->dtype : "non-tensor")};
    }
    auto chain = emit_chain(g, x.id, leaves, "v", plan.steps);
    if (!chain) return chain.error();
    plan.result = *chain;
  }
  auto dim = dim_of(*scan, shape.size());
  if (!dim || *dim < 0 || shape.empty() || (flip_dim && *flip_dim != *dim)) {
    return Error{fmt::format("{} over a dimension the {}-d input does not have (or not the flipped one)", scan->op,
                         shape.size())};
  }
  const auto d = static_cast<std::size_t>(*dim);
  plan.op = scan->op == Op::cumsum ? ScanOp::cumsum : ScanOp::cumprod;
  plan.outer = product(shape, 0, d);
  plan.extent = shape[d];
  plan.inner = product(shape, d + 1, shape.size());
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}


std::string scan_description(const ScanPlan& plan) {
  return (plan.exclusive ? "exclusive scan y = " : "scan y = ") + plan.pattern;
}

std::string scan_pattern(const ScanPlan& plan) { return plan.pattern; }

Result<std::string> emit_scan(const ScanPlan& plan, const CommentText& problem) { return generate_scan_kernel(plan, problem); }

}  // namespace cutegen::seed
