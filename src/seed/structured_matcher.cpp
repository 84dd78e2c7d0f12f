#include "seed/structured_matcher.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/gemm_route.h"
#include "seed/pointwise_ops.h"

namespace cutegen::seed {
namespace {

const std::set<std::string> kReduceOps = {"sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "max", "min"};
const std::set<std::string> kNormModules = {"layer_norm", "group_norm", "instance_norm", "batch_norm"};
const std::set<std::string> kLossOps = {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div"};

std::string reduce_op_of(const OpGraph& g, const Node& out, const Node*& src) {
  src = &out;
  if (out.op == "getitem" && !out.args.empty() && out.args[0].ref) {
    const Node& tuple = g.node(*out.args[0].ref);
    const double* index = number(out, "index");
    if ((tuple.op == "max" || tuple.op == "min") && index && (*index == 0 || *index == 1)) {
      src = &tuple;
      return *index == 0 ? tuple.op : "arg" + tuple.op;
    }
    return "";
  }
  if (out.op == "amax") return "max";
  if (out.op == "amin") return "min";
  return kReduceOps.count(out.op) ? out.op : "";
}

}  // namespace

bool is_reduce_op(const std::string& op) { return kReduceOps.count(op) > 0; }
bool is_norm_op(const std::string& op) { return kNormModules.count(op) > 0 || op == "norm"; }
bool is_gemm_op(const std::string& op) { return op == "matmul" || op == "linear"; }
bool is_loss_op(const std::string& op) { return kLossOps.count(op) > 0; }
bool is_scan_op(const std::string& op) { return op == "cumsum" || op == "cumprod"; }
bool is_pool_op(const std::string& op) { return op == "max_pool" || op == "avg_pool"; }
bool is_conv_op(const std::string& op) { return op == "conv"; }
bool is_dense_convolution(const OpGraph& g) {
  if (g.outputs.size() != 1 || !g.outputs[0].ref) return false;
  const Node& out = g.node(*g.outputs[0].ref);
  const double* groups = number(out, "groups");
  return is_conv_op(out.op) && groups && *groups == 1;
}

std::optional<ReducePlan> match_reduce(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  const Node* src = nullptr;
  const std::string op = reduce_op_of(g, *out, src);
  if (op.empty() || src->args.size() != 1) {
    reason = fmt::format("the output is {}, not a reduction of an input (the reduction seed is one op alone)",
                         out->op);
    return std::nullopt;
  }
  if (auto why = plain_input(g, src->args[0], "the reduced tensor"); !why.empty()) {
    reason = why;
    return std::nullopt;
  }
  if (!is_none(*src, "dtype")) {
    reason = fmt::format("{} with a dtype argument", src->op);
    return std::nullopt;
  }
  const Node& x = g.node(*src->args[0].ref);
  const auto& shape = x.type->shape;
  ReducePlan plan{.op = op,
                  .out_dtype = op.rfind("arg", 0) == 0 ? "int64" : "float32",
                  .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                  .input = x.index};
  auto dim = dim_of(*src, shape.size());
  if (dim && *dim < 0) {
    reason = fmt::format("{} over a dimension the {}-d input does not have", src->op, shape.size());
    return std::nullopt;
  }
  if (dim && !shape.empty()) {
    const auto d = static_cast<std::size_t>(*dim);
    plan.outer = product(shape, 0, d);
    plan.extent = shape[d];
    plan.inner = product(shape, d + 1, shape.size());
    plan.dim = static_cast<int>(d);
  } else if (op == "sum" || op == "mean") {
    // Everything into one number: the loss seed splits that over CTAs, where this one would use one.
    reason = fmt::format("{} of everything is the loss seed's", op);
    return std::nullopt;
  } else {
    plan.extent = product(shape, 0, shape.size());  // everything: one row
  }
  if (plan.extent == 0 && (op != "sum" && op != "prod")) {
    reason = fmt::format("{} over an empty dimension has no value", op);
    return std::nullopt;
  }
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}

std::optional<NormPlan> match_norm(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  NormPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  if (kNormModules.count(out->op)) {
    if (out->args.empty()) {
      reason = fmt::format("{} without an operand", out->op);
      return std::nullopt;
    }
    if (auto why = plain_input(g, out->args[0], fmt::format("{}'s input", out->op)); !why.empty()) {
      reason = why;
      return std::nullopt;
    }
    const Node& x = g.node(*out->args[0].ref);
    const auto& shape = x.type->shape;
    const std::size_t rank = shape.size();
    plan.kind = "mean_var";
    plan.input = x.index;
    const double* eps = number(*out, "eps");
    plan.eps = eps ? *eps : 1e-5;
    // weight and bias, when the module has them, follow x as param operands.
    std::size_t next = 1;
    for (const char* which : {"has_weight", "has_bias"}) {
      if (!flag(*out, which)) continue;
      if (next >= out->args.size() || !out->args[next].ref || g.node(*out->args[next].ref).op != "param") {
        reason = fmt::format("{}'s {} is not one of the model's parameters", out->op, which + 4);
        return std::nullopt;
      }
      const Node& p = g.node(*out->args[next++].ref);
      if (!p.type || p.type->dtype != "float32" || !p.type->contiguous) {
        reason = fmt::format("{}'s {} is not a contiguous float32 parameter", out->op, which + 4);
        return std::nullopt;
      }
      (std::string(which) == "has_weight" ? plan.weight_input : plan.bias_input) = p.index;
    }
    const int64_t numel = product(shape, 0, rank);
    if (out->op == "layer_norm") {
      const double* nd = number(*out, "normalized_ndim");
      if (!nd || *nd < 1 || static_cast<std::size_t>(*nd) > rank) {
        reason = "layer_norm over more dimensions than its input has";
        return std::nullopt;
      }
      plan.mode = "rows";
      plan.extent = product(shape, rank - static_cast<std::size_t>(*nd), rank);
      plan.outer = plan.extent ? numel / plan.extent : 0;
      plan.ch_per_group = plan.extent;  // the weight is indexed by the position in the row
    } else {
      if (rank < 2 || (out->op == "batch_norm" ? false : rank < 3)) {
        reason = fmt::format("{} of a {}-d input (the seed takes a batch: N, C, ...)", out->op, rank);
        return std::nullopt;
      }
      const int64_t n = shape[0], c = shape[1], hw = product(shape, 2, rank);
      if (out->op == "group_norm") {
        const double* groups = number(*out, "num_groups");
        if (!groups || *groups < 1 || c % static_cast<int64_t>(*groups)) {
          reason = "group_norm's channels do not divide into its groups";
          return std::nullopt;
        }
        const auto gcount = static_cast<int64_t>(*groups);
        plan.mode = "rows";
        plan.outer = n * gcount;
        plan.extent = c / gcount * hw;
        plan.ch_groups = gcount;
        plan.ch_per_group = c / gcount;
        plan.ch_hw = hw;
      } else {
        const bool running = flag(*out, "track_running_stats") && !flag(*out, "training");
        if (running) {
          reason = fmt::format("{} in eval mode uses its running statistics (no seed for that yet)", out->op);
          return std::nullopt;
        }
        if (out->op == "instance_norm") {
          plan.mode = "rows";
          plan.outer = n * c;
          plan.extent = hw;
          plan.ch_groups = c;
          plan.ch_per_group = 1;
          plan.ch_hw = hw;
        } else {
          plan.mode = "channels";
          plan.outer = n;
          plan.extent = c;
          plan.inner = hw;
        }
      }
    }
    plan.pattern = text_of(g, g.outputs[0]);
    return plan;
  }
  if ((out->op != "div" && out->op != "mul") || out->args.size() != 2 || !out->args[0].ref || !out->args[1].ref) {
    reason = fmt::format("the output is {}, not a normalisation (x / f(reduce(g(x))) or a norm module)", out->op);
    return std::nullopt;
  }
  if (auto why = plain_input(g, out->args[0], "the normalised tensor"); !why.empty()) {
    reason = why;
    return std::nullopt;
  }
  const Node& x = g.node(*out->args[0].ref);
  const auto& shape = x.type->shape;
  if (!out->type || out->type->shape != shape) {
    reason = "the normalised output does not have its input's shape";
    return std::nullopt;
  }
  // The one reduction the divisor depends on.
  std::vector<int> reductions;
  std::set<int> seen;
  std::vector<int> stack{*out->args[1].ref};
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const Node& n = g.node(id);
    if (n.op == "sum" || n.op == "mean" || n.op == "norm") {
      reductions.push_back(id);
      continue;
    }
    for (const auto& a : n.args)
      if (a.ref) stack.push_back(*a.ref);
  }
  if (reductions.size() != 1) {
    reason = fmt::format("the divisor depends on {} sum/mean/norm reductions; the norm seed takes one",
                         reductions.size());
    return std::nullopt;
  }
  const Node& r = g.node(reductions[0]);
  if (r.args.size() != 1 || !r.args[0].ref || !is_none(r, "dtype") || !r.type) {
    reason = fmt::format("{} with arguments the norm seed does not take", r.op);
    return std::nullopt;
  }
  plan.kind = "scaled";
  plan.input = x.index;
  plan.mean = r.op == "mean";
  plan.divide = out->op == "div";
  auto pre = emit_chain(g, *r.args[0].ref, {{x.id, "x0"}}, "p", plan.pre);
  if (!pre) {
    reason = pre.error().message;
    return std::nullopt;
  }
  plan.pre_result = *pre;
  std::string stat = "s";
  if (r.op == "norm") {
    std::string p = "2";
    auto it = r.params.find("p");
    if (it != r.params.end()) {
      if (const double* d = std::get_if<double>(&it->second)) p = fmt::format("{}", *d);
      else if (const std::string* s = std::get_if<std::string>(&it->second)) p = *s == "fro" ? "2" : *s;
    }
    if (p == "2") {
      plan.pre.push_back({"p_sq", fmt::format("({0} * {0})", plan.pre_result), "square, for the 2-norm"});
      plan.pre_result = "p_sq";
      plan.post.push_back({"s_norm", "sqrtf(s)", "the 2-norm"});
      stat = "s_norm";
    } else if (p == "1") {
      plan.pre.push_back({"p_abs", fmt::format("fabsf({})", plan.pre_result), "abs, for the 1-norm"});
      plan.pre_result = "p_abs";
    } else {
      reason = fmt::format("norm with p={} (the seed has p=1, 2 and 'fro')", p);
      return std::nullopt;
    }
  }
  auto post = emit_chain(g, *out->args[1].ref, {{r.id, stat}}, "q", plan.post);
  if (!post) {
    reason = post.error().message;
    return std::nullopt;
  }
  plan.post_result = *post;
  auto dim = dim_of(r, shape.size());
  if (!dim) {
    plan.mode = "all";
    plan.extent = product(shape, 0, shape.size());
  } else {
    if (*dim < 0 || !flag(r, "keepdim")) {
      reason = fmt::format("{} over dim {} without keepdim=True does not broadcast back over its input", r.op,
                           *dim);
      return std::nullopt;
    }
    const auto d = static_cast<std::size_t>(*dim);
    plan.outer = product(shape, 0, d);
    plan.extent = shape[d];
    plan.inner = product(shape, d + 1, shape.size());
    plan.mode = plan.inner == 1 ? "rows" : "columns";
    plan.dim = static_cast<int>(d);
  }
  const Node& divisor = g.node(*out->args[1].ref);
  if (!divisor.type || divisor.type->shape != r.type->shape) {
    reason = "the divisor is broadcast beyond its reduction's shape";
    return std::nullopt;
  }
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}

bool match_matmul(const OpGraph& g, const Node& mm, GemmPlan& plan, std::string& reason) {
  if (mm.op != "matmul" || mm.args.size() != 2) {
    reason = fmt::format("the output is {}, not a matrix product of inputs", mm.op);
    return false;
  }
  // Each operand: a forward input or parameter, or the transpose of its last two dimensions.
  struct Side {
    const Node* x = nullptr;
    bool transposed = false;
  };
  Side sides[2];
  for (int i = 0; i < 2; ++i) {
    Operand o = mm.args[static_cast<std::size_t>(i)];
    if (o.ref && g.node(*o.ref).op == "transpose") {
      const Node& t = g.node(*o.ref);
      const Node* src = t.args.empty() || !t.args[0].ref ? nullptr : &g.node(*t.args[0].ref);
      const std::size_t rank = src && src->type ? src->type->shape.size() : 0;
      auto d0 = dim_of(t, rank, "dim0"), d1 = dim_of(t, rank, "dim1");
      const auto last = static_cast<int64_t>(rank) - 1;
      if (rank < 2 || !d0 || !d1 || std::min(*d0, *d1) != last - 1 || std::max(*d0, *d1) != last) {
        reason = "a transpose of other than the last two dimensions";
        return false;
      }
      sides[i].transposed = true;
      o = t.args[0];
    }
    if (auto why = plain_input(g, o, i == 0 ? "the left operand" : "the right operand", true); !why.empty()) {
      reason = why;
      return false;
    }
    sides[i].x = &g.node(*o.ref);
  }
  auto a = sides[0].x->type->shape, b = sides[1].x->type->shape;
  if (sides[0].transposed) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (sides[1].transposed) std::swap(b[b.size() - 1], b[b.size() - 2]);
  if (a.size() < 2 || b.empty()) {
    reason = "a matrix product with a vector on the left";
    return false;
  }
  if (b.size() == 1) b.push_back(1);  // matrix @ vector: a one-column matrix, the same memory
  plan.a_transposed = sides[0].transposed;
  plan.b_transposed = sides[1].transposed;
  const bool fp32_product = mm.type && mm.type->dtype == "float32" && mm.type->contiguous;
  plan.matrices = sides[0].x->type->shape.size() == 2 && sides[1].x->type->shape.size() == 2 && fp32_product &&
                  mm.type->shape.size() == 2;
  plan.a_input = sides[0].x->index;
  plan.b_input = sides[1].x->index;
  plan.k = a.back();
  plan.n = b.back();
  if (b[b.size() - 2] != plan.k) {
    reason = "the operands' inner dimensions differ";
    return false;
  }
  if (b.size() == 2) {
    if (a.size() > 2 && (plan.a_transposed || !plan.mask.empty())) {
      reason = "a batched transposed or masked left operand times a matrix";
      return false;
    }
    plan.m = product(a, 0, a.size() - 1);  // (..., M, K) @ (K, N): the batch folds into M
    plan.folds_into_m = a.size() > 2 && sides[1].x->type->shape.size() == 2 && fp32_product;
  } else if (a.size() == 3 && b.size() == 3 && a[0] == b[0]) {
    plan.batch = a[0];
    plan.m = a[1];
    plan.batched_matrices = fp32_product && mm.type->shape.size() == 3;
    plan.a_batch_stride = a[1] * a[2];
    plan.b_batch_stride = b[1] * b[2];
  } else {
    reason = "a broadcast batched matrix product (the seed has (B, M, K) @ (B, K, N) and (..., M, K) @ (K, N))";
    return false;
  }
  return true;
}

std::optional<GemmPlan> match_gemm(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  GemmPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const Node* mm = out;
  if ((out->op == "triu" || out->op == "tril") && out->args.size() == 1 && out->args[0].ref) {
    plan.mask = out->op;
    const double* d = number(*out, "diagonal");
    plan.diagonal = d ? static_cast<int64_t>(*d) : 0;
    mm = &g.node(*out->args[0].ref);
  }
  if (!match_matmul(g, *mm, plan, reason)) return std::nullopt;
  plan.pattern = text_of(g, g.outputs[0]);
  choose_gemm_route(plan);
  return plan;
}

namespace {

// ATen's per-element formula of a loss function on (a, b) = (input, target).
Result<std::string> loss_formula(const Node& n, const std::string& a, const std::string& b) {
  const double* beta = number(n, "beta");
  const double* delta = number(n, "delta");
  if (n.op == "mse_loss") return fmt::format("(({0}) - ({1})) * (({0}) - ({1}))", a, b);
  if (n.op == "l1_loss") return fmt::format("fabsf(({}) - ({}))", a, b);
  if (n.op == "smooth_l1_loss") {
    const double bt = beta ? *beta : 1.0;
    if (bt == 0) return fmt::format("fabsf(({}) - ({}))", a, b);
    return fmt::format("[&] {{ const float z = fabsf(({0}) - ({1})); return z < {2} ? 0.5f * z * z / {2} : z - 0.5f * {2}; }}()",
                       a, b, float_literal(bt));
  }
  if (n.op == "huber_loss") {
    const double d = delta ? *delta : 1.0;
    return fmt::format("[&] {{ const float z = fabsf(({0}) - ({1})); return z < {2} ? 0.5f * z * z : {2} * (z - 0.5f * {2}); }}()",
                       a, b, float_literal(d));
  }
  if (flag(n, "log_target")) return fmt::format("expf({1}) * (({1}) - ({0}))", a, b);
  // kl_div: xlogy(t, t) - t * input, xlogy(0, y) being 0.
  return fmt::format("(({1}) == 0.f ? 0.f : ({1}) * logf({1})) - ({1}) * ({0})", a, b);
}

}  // namespace

std::optional<LossPlan> match_loss(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  LossPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  std::vector<int> roots;  // the chains the element formula reads
  if (out->op == "mean" || out->op == "sum") {
    if (!is_none(*out, "dim")) {
      reason = fmt::format("{} over one dimension of a computed value (a fused prologue is future work)", out->op);
      return std::nullopt;
    }
    if (!is_none(*out, "dtype")) {
      reason = fmt::format("{} with a dtype argument", out->op);
      return std::nullopt;
    }
    plan.reduction = out->op;
  } else if (kLossOps.count(out->op)) {
    for (const char* legacy : {"size_average", "reduce"})
      if (!is_none(*out, legacy)) {
        reason = fmt::format("{} with the deprecated {} argument", out->op, legacy);
        return std::nullopt;
      }
    auto it = out->params.find("reduction");
    const std::string* r = it == out->params.end() ? nullptr : std::get_if<std::string>(&it->second);
    plan.reduction = r ? *r : "mean";
    if (plan.reduction != "mean" && plan.reduction != "sum" &&
        !(plan.reduction == "batchmean" && out->op == "kl_div")) {
      reason = fmt::format("{} with reduction '{}' (the loss seed writes one number)", out->op, plan.reduction);
      return std::nullopt;
    }
  } else {
    reason = fmt::format("the output is {}, not a loss", out->op);
    return std::nullopt;
  }
  const std::size_t operands = out->op == "mean" || out->op == "sum" ? 1 : 2;
  if (out->args.size() != operands) {
    reason = fmt::format("{} with {} operands", out->op, out->args.size());
    return std::nullopt;
  }
  for (const auto& a : out->args) {
    if (!a.ref || !g.node(*a.ref).type) {
      reason = fmt::format("{} of a number", out->op);
      return std::nullopt;
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
    if (n.op == "input" || n.op == "param") {
      if (n.scalar) {
        reason = fmt::format("the loss reads the scalar argument {} (not in the loss seed yet)", n.name);
        return std::nullopt;
      }
      if (auto why = n.op == "param" ? std::string() : plain_input(g, Operand{.ref = id}, "input " + n.name);
          !why.empty()) {
        reason = why;
        return std::nullopt;
      }
      const auto& s = n.type->shape;
      const bool suffix = s.size() <= shape.size() && std::equal(s.begin(), s.end(), shape.end() - static_cast<long>(s.size()));
      if (!suffix || n.type->dtype != "float32" || !n.type->contiguous) {
        reason = fmt::format("{} does not broadcast as a suffix of the loss's elements", n.name);
        return std::nullopt;
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
    reason = "the loss depends on no input tensor";
    return std::nullopt;
  }
  std::vector<std::string> values;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    auto v = emit_chain(g, roots[i], leaves, "v", plan.steps);
    if (!v) {
      reason = v.error().message;
      return std::nullopt;
    }
    values.push_back(*v);
    // The second chain reuses what the first computed rather than defining it again.
    for (const auto& step : plan.steps)
      if (step.value.size() > 1 && step.value[0] == 'v') leaves[std::stoi(step.value.substr(1))] = step.value;
  }
  if (operands == 2) {
    auto formula = loss_formula(*out, values[0], values[1]);
    if (!formula) {
      reason = formula.error().message;
      return std::nullopt;
    }
    plan.steps.push_back({"loss", *formula, fmt::format("{}'s element", out->op)});
    plan.result = "loss";
  } else {
    plan.result = values[0];
  }
  plan.scale = plan.reduction == "sum"        ? 1.0
               : plan.reduction == "mean"     ? 1.0 / static_cast<double>(std::max<int64_t>(plan.numel, 1))
                                              : 1.0 / static_cast<double>(shape.empty() ? 1 : std::max<int64_t>(shape[0], 1));
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}

std::optional<ScanPlan> match_scan(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  ScanPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const Node* scan = out;
  std::optional<int64_t> flip_dim;
  // flip(scan(flip(x, d), d), d): the same scan read from the end.
  auto flip_of = [&](const Node& n) -> const Node* {
    if (n.op != "flip" || n.args.size() != 1 || !n.args[0].ref || !n.type) return nullptr;
    auto d = dim_of(n, n.type->shape.size(), "dims");
    if (!d || *d < 0 || (flip_dim && *flip_dim != *d)) return nullptr;
    flip_dim = *d;
    return &g.node(*n.args[0].ref);
  };
  if (out->op == "flip") {
    scan = flip_of(*out);
    if (!scan) {
      reason = "a flip of other than one dimension";
      return std::nullopt;
    }
    plan.reverse = true;
  }
  if (!is_scan_op(scan->op) || scan->args.size() != 1) {
    reason = fmt::format("the output is {}, not a scan of an input", scan->op);
    return std::nullopt;
  }
  if (!is_none(*scan, "dtype")) {
    reason = fmt::format("{} with a dtype argument", scan->op);
    return std::nullopt;
  }
  Operand source = scan->args[0];
  if (plan.reverse) {
    const Node* inner = source.ref ? flip_of(g.node(*source.ref)) : nullptr;
    if (!inner) {
      reason = "a flipped scan whose input is not flipped back over the same dimension";
      return std::nullopt;
    }
    source = Operand{.ref = inner->id};
  }
  if (!source.ref || !g.node(*source.ref).type) {
    reason = fmt::format("{} of a number", scan->op);
    return std::nullopt;
  }
  const Node& x = g.node(*source.ref);
  const auto shape = x.type->shape;
  if (x.op == "input") {
    if (auto why = plain_input(g, source, "the scanned tensor"); !why.empty()) {
      reason = why;
      return std::nullopt;
    }
    plan.inputs = {x.index};
    plan.dtypes = {"float32"};
    plan.names = {x.name};
  } else {
    // A pointwise chain of inputs of the scanned shape, read as it is scanned (masked cumsum: x * mask).
    if (plan.reverse) {
      reason = "a reverse scan of a computed value";
      return std::nullopt;
    }
    std::map<int, std::string> leaves;
    std::set<int> seen;
    std::vector<int> stack{x.id};
    while (!stack.empty()) {
      int id = stack.back();
      stack.pop_back();
      if (!seen.insert(id).second) continue;
      const Node& n = g.node(id);
      if (n.op == "input" || n.op == "param") {
        if (n.scalar || !n.type || n.type->shape != shape || !n.type->contiguous ||
            (n.type->dtype != "float32" && n.type->dtype != "bool")) {
          reason = fmt::format("{} of a chain that reads {} (the scan seed's chains read contiguous float32 or bool "
                               "tensors of the scanned shape)",
                               scan->op, n.name);
          return std::nullopt;
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
      reason = fmt::format("{} of a {} value (this seed is float32)", scan->op, x.type ? x.type->dtype : "non-tensor");
      return std::nullopt;
    }
    auto chain = emit_chain(g, x.id, leaves, "v", plan.steps);
    if (!chain) {
      reason = chain.error().message;
      return std::nullopt;
    }
    plan.result = *chain;
  }
  auto dim = dim_of(*scan, shape.size());
  if (!dim || *dim < 0 || shape.empty() || (flip_dim && *flip_dim != *dim)) {
    reason = fmt::format("{} over a dimension the {}-d input does not have (or not the flipped one)", scan->op,
                         shape.size());
    return std::nullopt;
  }
  const auto d = static_cast<std::size_t>(*dim);
  plan.op = scan->op;
  plan.outer = product(shape, 0, d);
  plan.extent = shape[d];
  plan.inner = product(shape, d + 1, shape.size());
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}

namespace {

// A pooling's or convolution's window, given by the worker per dimension as k0, s0, p0, d0, k1, ...,
// right-aligned into (D, H, W); false, with the reason, when a number is missing or out of range.
bool read_window(const Node& n, int dims, int64_t kernel[3], int64_t stride[3], int64_t padding[3],
                 int64_t dilation[3], const std::string& what, std::string& reason) {
  for (int i = 0; i < dims; ++i) {
    const int slot = 3 - dims + i;
    const double* k = number(n, fmt::format("k{}", i).c_str());
    const double* s = number(n, fmt::format("s{}", i).c_str());
    const double* p = number(n, fmt::format("p{}", i).c_str());
    const double* d = number(n, fmt::format("d{}", i).c_str());
    if (!k || !s || !p || !d || *k < 1 || *s < 1 || *p < 0 || *d < 1) {
      reason = fmt::format("{}'s window for dimension {} is missing or not positive", what, i);
      return false;
    }
    kernel[slot] = static_cast<int64_t>(*k);
    stride[slot] = static_cast<int64_t>(*s);
    padding[slot] = static_cast<int64_t>(*p);
    dilation[slot] = static_cast<int64_t>(*d);
  }
  return true;
}

// The graph's output when it is a convolution (with its weight) of a forward input; nullptr with the reason.
const Node* convolution_of_input(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return nullptr;
  if (!is_conv_op(out->op) || out->args.size() < 2 || !out->type) {
    reason = fmt::format("the output is {}, not a convolution of an input", out->op);
    return nullptr;
  }
  if (auto why = plain_input(g, out->args[0], "the convolved tensor"); !why.empty()) {
    reason = why;
    return nullptr;
  }
  return out;
}

// One number per dimension as a module's argument is written: 4, or (3, 5).
std::string per_dim(const int64_t* v, int dims) {
  std::vector<int64_t> used(v + 3 - dims, v + 3);
  return used.size() == 1 ? fmt::format("{}", used[0]) : fmt::format("({})", fmt::join(used, ", "));
}

}  // namespace

std::optional<PoolPlan> match_pool(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  if (!is_pool_op(out->op) || out->args.size() != 1 || !out->type) {
    reason = fmt::format("the output is {}, not a pooling of an input", out->op);
    return std::nullopt;
  }
  if (auto why = plain_input(g, out->args[0], "the pooled tensor"); !why.empty()) {
    reason = why;
    return std::nullopt;
  }
  PoolPlan plan{.max = out->op == "max_pool", .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const Node& x = g.node(*out->args[0].ref);
  plan.input = x.index;
  const double* dims = number(*out, "dims");
  const auto& in = x.type->shape;
  const auto& os = out->type->shape;
  if (!dims || *dims < 1 || *dims > 3 || in.size() < static_cast<std::size_t>(*dims) + 1 || os.size() != in.size()) {
    reason = fmt::format("{} of a {}-d input", out->op, in.size());
    return std::nullopt;
  }
  if (flag(*out, "return_indices")) {
    reason = "max_pool with return_indices (two outputs)";
    return std::nullopt;
  }
  plan.dims = static_cast<int>(*dims);
  const std::size_t first = in.size() - static_cast<std::size_t>(plan.dims);
  plan.planes = product(in, 0, first);
  for (int i = 0; i < plan.dims; ++i) {
    const int slot = 3 - plan.dims + i;  // right-aligned into (D, H, W)
    plan.in[slot] = in[first + static_cast<std::size_t>(i)];
    plan.out[slot] = os[first + static_cast<std::size_t>(i)];
  }
  if (!read_window(*out, plan.dims, plan.kernel, plan.stride, plan.padding, plan.dilation, out->op, reason))
    return std::nullopt;
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

std::optional<DepthwiseConvPlan> match_depthwise_conv(const OpGraph& g, std::string& reason) {
  const Node* out = convolution_of_input(g, reason);
  if (!out) return std::nullopt;
  const Node& x = g.node(*out->args[0].ref);
  const double* dims = number(*out, "dims");
  const double* groups = number(*out, "groups");
  const double* in_channels = number(*out, "in_channels");
  const double* out_channels = number(*out, "out_channels");
  if (!dims || !groups || !in_channels || !out_channels || *dims < 1 || *dims > 3) {
    reason = "a convolution without its geometry (dims, groups, channels)";
    return std::nullopt;
  }
  if (*groups != *in_channels || *out_channels != *in_channels) {
    reason = *groups == 1 ? "a dense convolution (groups=1): only depthwise convolutions (groups = channels) have a seed"
                          : fmt::format("a grouped convolution (groups={}, {} -> {} channels): only depthwise ones "
                                        "(groups = in = out channels) have a seed",
                                        *groups, *in_channels, *out_channels);
    return std::nullopt;
  }
  const auto& in = x.type->shape;
  const auto& os = out->type->shape;
  if (x.type->dtype != "float32" || in.size() != static_cast<std::size_t>(*dims) + 2 || os.size() != in.size() ||
      in[1] != static_cast<int64_t>(*in_channels)) {
    reason = fmt::format("a depthwise convolution of a {} {}-d input (the seed takes float32 (N, C, spatial...))",
                         x.type->dtype, in.size());
    return std::nullopt;
  }
  DepthwiseConvPlan plan{.dims = static_cast<int>(*dims), .batch = in[0], .channels = in[1],
                         .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()), .input = x.index};
  auto param = [&](std::size_t at, const char* what, const Node*& p) {
    if (at >= out->args.size() || !out->args[at].ref || g.node(*out->args[at].ref).op != "param") {
      reason = fmt::format("the convolution's {} is not one of the model's parameters", what);
      return false;
    }
    p = &g.node(*out->args[at].ref);
    if (!p->type || p->type->dtype != "float32" || !p->type->contiguous) {
      reason = fmt::format("the convolution's {} is not a contiguous float32 parameter", what);
      return false;
    }
    return true;
  };
  const Node* weight = nullptr;
  const Node* bias = nullptr;
  if (!param(1, "weight", weight)) return std::nullopt;
  if (flag(*out, "has_bias") && !param(2, "bias", bias)) return std::nullopt;
  plan.weight_input = weight->index;
  plan.bias_input = bias ? bias->index : -1;
  for (int i = 0; i < plan.dims; ++i) {
    const int slot = 3 - plan.dims + i;  // right-aligned into (D, H, W)
    plan.in[slot] = in[2 + static_cast<std::size_t>(i)];
    plan.out[slot] = os[2 + static_cast<std::size_t>(i)];
  }
  if (!read_window(*out, plan.dims, plan.kernel, plan.stride, plan.padding, plan.dilation, "the convolution", reason))
    return std::nullopt;
  const int64_t window = plan.kernel[0] * plan.kernel[1] * plan.kernel[2];
  if (weight->type->shape.empty() || weight->type->shape[0] != plan.channels || product(weight->type->shape, 0, weight->type->shape.size()) != plan.channels * window) {
    reason = "the depthwise convolution's weight is not (channels, 1, window...)";
    return std::nullopt;
  }
  if (bias && product(bias->type->shape, 0, bias->type->shape.size()) != plan.channels) {
    reason = "the depthwise convolution's bias is not one value per channel";
    return std::nullopt;
  }
  // conv2d(x, weight, bias, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=64)
  plan.pattern = fmt::format("conv{}d({}, {}{}, stride={}, padding={}, dilation={}, groups={})", plan.dims, x.name,
                             weight->name, bias ? ", " + bias->name : std::string(), per_dim(plan.stride, plan.dims),
                             per_dim(plan.padding, plan.dims), per_dim(plan.dilation, plan.dims), plan.channels);
  return plan;
}

std::optional<GemmPlan> match_pointwise_conv(const OpGraph& g, std::string& reason) {
  const Node* out = convolution_of_input(g, reason);
  if (!out) return std::nullopt;
  const Node& x = g.node(*out->args[0].ref);
  const double* dims = number(*out, "dims");
  const double* groups = number(*out, "groups");
  if (!dims || !groups || *groups != 1) {
    reason = "not a dense convolution (groups=1)";
    return std::nullopt;
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
    reason = fmt::format("a dense convolution with a {} window: only depthwise (groups = channels) and pointwise "
                         "(1x1, stride 1, no padding) convolutions have a seed", fmt::join(window, "x"));
    return std::nullopt;
  }
  if (flag(*out, "has_bias")) {
    reason = "a pointwise convolution with a bias (a per-output-channel bias in the GEMM's epilogue is future work)";
    return std::nullopt;
  }
  const auto& in = x.type->shape;
  const auto& os = out->type->shape;
  if (x.type->dtype != "float32" || in.size() != static_cast<std::size_t>(*dims) + 2 || os.size() != in.size()) {
    reason = fmt::format("a pointwise convolution of a {} {}-d input (the seed takes float32 (N, C, spatial...))",
                         x.type->dtype, in.size());
    return std::nullopt;
  }
  const Node* weight = out->args[1].ref ? &g.node(*out->args[1].ref) : nullptr;
  if (!weight || weight->op != "param" || !weight->type || weight->type->dtype != "float32" ||
      !weight->type->contiguous) {
    reason = "the convolution's weight is not a contiguous float32 parameter";
    return std::nullopt;
  }
  const int64_t spatial = product(in, 2, in.size());
  GemmPlan plan{.batch = in[0], .m = os[1], .n = spatial, .k = in[1],
                .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  if (product(weight->type->shape, 0, weight->type->shape.size()) != plan.m * plan.k ||
      product(os, 2, os.size()) != spatial) {
    reason = "a pointwise convolution whose weight or output does not have the shapes of one";
    return std::nullopt;
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

std::optional<BroadcastPlan> match_broadcast(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  if (!out->type || out->type->dtype != "float32" || out->op == "input") {
    reason = "the broadcast seed writes a float32 tensor computed from its inputs";
    return std::nullopt;
  }
  BroadcastPlan plan{.shape = out->type->shape, .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  const std::size_t rank = plan.shape.size();
  // Leaves: inputs and unsqueezes of inputs, each with the shape it is used at.
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
    if (n.op == "input" || n.op == "param") data = &n;
    if (n.op == "unsqueeze" && n.args.size() == 1 && n.args[0].ref && g.node(*n.args[0].ref).op == "input") {
      data = &g.node(*n.args[0].ref);
    }
    if (data) {
      if (data->scalar || !data->type || data->type->dtype != "float32" || !data->type->contiguous || !n.type) {
        reason = fmt::format("{} is not a contiguous float32 tensor", data->name);
        return std::nullopt;
      }
      const auto& s = n.type->shape;
      bool fits = s.size() <= rank;
      for (std::size_t i = 0; fits && i < s.size(); ++i) {
        const int64_t o = plan.shape[rank - s.size() + i];
        fits = s[i] == o || s[i] == 1;
      }
      if (!fits) {
        reason = fmt::format("{} does not broadcast to the output", n.name);
        return std::nullopt;
      }
      leaves[id] = "";
      leaf_data[id] = {data, s};
      continue;
    }
    if (n.op == "unsqueeze") {
      reason = "an unsqueeze of a computed value";
      return std::nullopt;
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
    reason = "the output depends on no input tensor";
    return std::nullopt;
  }
  auto result = emit_chain(g, out->id, leaves, "v", plan.steps);
  if (!result) {
    reason = result.error().message;
    return std::nullopt;
  }
  plan.result = *result;
  plan.pattern = text_of(g, g.outputs[0]);
  return plan;
}

std::optional<CrossEntropyPlan> match_cross_entropy(const OpGraph& g, std::string& reason) {
  const Node* out = single_output(g, reason);
  if (!out) return std::nullopt;
  if (out->op != "cross_entropy" || out->args.size() != 2) {
    reason = fmt::format("the output is {}, not a cross entropy of inputs", out->op);
    return std::nullopt;
  }
  for (const char* unsupported : {"weight", "size_average", "reduce"})
    if (!is_none(*out, unsupported)) {
      reason = fmt::format("cross_entropy with {}", unsupported);
      return std::nullopt;
    }
  const double* smoothing = number(*out, "label_smoothing");
  if (smoothing && *smoothing != 0) {
    reason = "cross_entropy with label smoothing";
    return std::nullopt;
  }
  auto it = out->params.find("reduction");
  const std::string* reduction = it == out->params.end() ? nullptr : std::get_if<std::string>(&it->second);
  const std::string r = reduction ? *reduction : "mean";
  if (r != "mean" && r != "sum") {
    reason = fmt::format("cross_entropy with reduction '{}' (the loss seed writes one number)", r);
    return std::nullopt;
  }
  if (auto why = plain_input(g, out->args[0], "the logits"); !why.empty()) {
    reason = why;
    return std::nullopt;
  }
  const Node& logits = g.node(*out->args[0].ref);
  const Node* targets = out->args[1].ref ? &g.node(*out->args[1].ref) : nullptr;
  const auto& shape = logits.type->shape;
  if (shape.size() != 2 || !targets || targets->op != "input" || !targets->type || targets->type->dtype != "int64" ||
      !targets->type->contiguous || targets->type->shape != std::vector<int64_t>{shape[0]}) {
    reason = "cross_entropy of other than (B, C) logits and (B,) int64 class indices";
    return std::nullopt;
  }
  const double* ignore = number(*out, "ignore_index");
  return CrossEntropyPlan{.rows = shape[0],
                          .classes = shape[1],
                          .ignore_index = ignore ? static_cast<int64_t>(*ignore) : -100,
                          .mean = r == "mean",
                          .logits_input = logits.index,
                          .targets_input = targets->index,
                          .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                          .pattern = text_of(g, g.outputs[0])};
}

}  // namespace cutegen::seed
