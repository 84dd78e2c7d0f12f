#include "seed/routes/loss/loss_route.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/pointwise_ops.h"
#include "seed/routes/loss/loss_kernel.h"

namespace cutegen::seed {

namespace {

// ATen's per-element formula of a loss function on (a, b) = (input, target).
Result<std::string> loss_formula(const Node& n, const std::string& a, const std::string& b) {
  const double* beta = number(n, "beta");
  const double* delta = number(n, "delta");
  if (n.op == Op::mse_loss) return fmt::format("(({0}) - ({1})) * (({0}) - ({1}))", a, b);
  if (n.op == Op::l1_loss) return fmt::format("fabsf(({}) - ({}))", a, b);
  if (n.op == Op::smooth_l1_loss) {
    const double bt = beta ? *beta : 1.0;
    if (bt == 0) return fmt::format("fabsf(({}) - ({}))", a, b);
    return fmt::format("[&] {{ const float z = fabsf(({0}) - ({1})); return z < {2} ? 0.5f * z * z / {2} : z - 0.5f * {2}; }}()",
                       a, b, float_literal(bt));
  }
  if (n.op == Op::huber_loss) {
    const double d = delta ? *delta : 1.0;
    return fmt::format("[&] {{ const float z = fabsf(({0}) - ({1})); return z < {2} ? 0.5f * z * z : {2} * (z - 0.5f * {2}); }}()",
                       a, b, float_literal(d));
  }
  if (flag(n, "log_target")) return fmt::format("expf({1}) * (({1}) - ({0}))", a, b);
  // kl_div: xlogy(t, t) - t * input, xlogy(0, y) being 0.
  return fmt::format("(({1}) == 0.f ? 0.f : ({1}) * logf({1})) - ({1}) * ({0})", a, b);
}

}  // namespace

Result<LossPlan> match_loss(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  LossPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  std::vector<int> roots;  // the chains the element formula reads
  if (out->op == Op::mean || out->op == Op::sum) {
    if (!is_none(*out, "dim")) {
      return Error{fmt::format("{} over {} of a computed value (a fused prologue is future work)", out->op,
                               dim_count(*out) > 1 ? fmt::format("{} dimensions", dim_count(*out)) : "one dimension")};
    }
    if (!is_none(*out, "dtype")) {
      return Error{fmt::format("{} with a dtype argument", out->op)};
    }
    plan.reduction = out->op == Op::sum ? LossReduction::sum : LossReduction::mean;
  } else if (is_loss_function(out->op.op())) {
    for (const char* legacy : {"size_average", "reduce"})
      if (!is_none(*out, legacy)) {
        return Error{fmt::format("{} with the deprecated {} argument", out->op, legacy)};
      }
    auto it = out->params.find("reduction");
    const std::string* r = it == out->params.end() ? nullptr : std::get_if<std::string>(&it->second);
    const std::string reduction = r ? *r : "mean";
    if (reduction != "mean" && reduction != "sum" && !(reduction == "batchmean" && out->op == Op::kl_div)) {
      return Error{fmt::format("{} with reduction '{}' (the loss seed writes one number)", out->op, reduction)};
    }
    plan.reduction = reduction == "sum"    ? LossReduction::sum
                     : reduction == "mean" ? LossReduction::mean
                                           : LossReduction::batchmean;
  } else {
    return Error{fmt::format("the output is {}, not a loss", out->op)};
  }
  const std::size_t operands = out->op == Op::mean || out->op == Op::sum ? 1 : 2;
  if (out->args.size() != operands) {
    return Error{fmt::format("{} with {} operands", out->op, out->args.size())};
  }
  for (const auto& a : out->args) {
    if (!a.ref || !g.node(*a.ref).type) {
      return Error{fmt::format("{} of a number", out->op)};
    }
    roots.push_back(*a.ref);
  }
  const std::vector<int64_t> shape = g.node(roots[0]).type->shape;
  plan.numel = product(shape, 0, shape.size());
  // The chains' tensors: forward inputs of the element shape or a broadcast suffix of it.
  std::map<int, std::string> leaves;
  std::set<int> seen;
  std::vector<int> stack = roots;
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const Node& n = g.node(id);
    if (n.op == Op::input || n.op == Op::param) {
      if (n.scalar) {
        return Error{fmt::format("the loss reads the scalar argument {} (not in the loss seed yet)", n.name)};
      }
      if (auto why = n.op == Op::param ? std::string() : plain_input(g, Operand{.ref = id}, "input " + n.name);
          !why.empty()) return Error{why};
      const auto& s = n.type->shape;
      const bool suffix = s.size() <= shape.size() && std::equal(s.begin(), s.end(), shape.end() - static_cast<long>(s.size()));
      if (!suffix || n.type->dtype != "float32" || !n.type->contiguous) {
        return Error{fmt::format("{} does not broadcast as a suffix of the loss's elements", n.name)};
      }
      leaves[id] = fmt::format("x{}", plan.inputs.size());
      continue;
    }
    for (const auto& a : n.args)
      if (a.ref) stack.push_back(*a.ref);
  }
  // Operand numbering follows the contract order, whatever order the walk found them in.
  int k = 0;
  for (auto& [id, name] : leaves) {
    name = fmt::format("x{}", k++);
    const Node& n = g.node(id);
    plan.inputs.push_back(n.index);
    plan.sizes.push_back(product(n.type->shape, 0, n.type->shape.size()));
    plan.names.push_back(n.name);
  }
  if (plan.inputs.empty()) {
    return Error{"the loss depends on no input tensor"};
  }
  std::vector<std::string> values;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    auto v = emit_chain(g, roots[i], leaves, "v", plan.steps);
    if (!v) return v.error();
    values.push_back(*v);
    // The second chain reuses what the first computed rather than defining it again.
    for (const auto& step : plan.steps)
      if (step.value.size() > 1 && step.value[0] == 'v') leaves[std::stoi(step.value.substr(1))] = step.value;
  }
  if (operands == 2) {
    auto formula = loss_formula(*out, values[0], values[1]);
    if (!formula) return formula.error();
    plan.steps.push_back({"loss", *formula, fmt::format("{}'s element", out->op)});
    plan.result = "loss";
  } else {
    plan.result = values[0];
  }
  plan.scale = plan.reduction == LossReduction::sum    ? 1.0
               : plan.reduction == LossReduction::mean ? 1.0 / static_cast<double>(std::max<int64_t>(plan.numel, 1))
                                              : 1.0 / static_cast<double>(shape.empty() ? 1 : std::max<int64_t>(shape[0], 1));
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}


std::string loss_description(const LossPlan& plan) { return "loss y = " + plan.pattern; }

std::string loss_pattern(const LossPlan& plan) { return plan.pattern; }

Result<std::string> emit_loss(const LossPlan& plan, const CommentText& problem) { return generate_loss_kernel(plan, problem); }

}  // namespace cutegen::seed
