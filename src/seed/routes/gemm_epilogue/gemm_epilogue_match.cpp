#include "seed/routes/gemm_epilogue/gemm_epilogue_route.h"

#include <map>
#include <set>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/routes/gemm/gemm_kernel_choice.h"
#include "seed/routes/gemm/gemm_route.h"

namespace cutegen::seed {
namespace {

// nn.Linear / F.linear: y = x @ weight.T (+ bias). x (..., K) folds its leading dimensions into M; the
// weight is (N, K) row-major, which is the seed GEMM's transposed B.
Status match_linear(const OpGraph& g, const Node& lin, GemmPlan& plan) {
  if (lin.args.size() != 2 && lin.args.size() != 3) {
    return Error{"linear without its weight"};
  }
  for (std::size_t i = 0; i < lin.args.size(); ++i) {
    static const char* const kWhat[] = {"the linear's input", "the linear's weight", "the linear's bias"};
    if (auto why = plain_input(g, lin.args[i], kWhat[i], true); !why.empty()) return Error{why};
  }
  const Node& x = g.node(*lin.args[0].ref);
  const Node& w = g.node(*lin.args[1].ref);
  const auto& xs = x.type->shape;
  const auto& ws = w.type->shape;
  if (xs.empty() || ws.size() != 2 || ws[1] != xs.back()) {
    return Error{fmt::format("linear of a {} input with a {} weight", shape_text(xs), shape_text(ws))};
  }
  plan.m = product(xs, 0, xs.size() - 1);
  plan.k = xs.back();
  plan.n = ws[0];
  plan.a_input = x.index;
  plan.b_input = w.index;
  plan.b_transposed = true;
  // The library GEMM's views (library_gemm_refusal): x (M, K) or (..., M, K) folded into M, a contiguous fp32
  // product of the same leading dimensions.
  const bool fp32_product = lin.type && lin.type->dtype == "float32" && lin.type->contiguous &&
                            lin.type->shape.size() == xs.size();
  plan.matrices = xs.size() == 2 && fp32_product;
  plan.folds_into_m = xs.size() > 2 && fp32_product;
  if (lin.args.size() == 3) {
    const Node& b = g.node(*lin.args[2].ref);
    if (b.type->shape != std::vector<int64_t>{plan.n}) {
      return Error{fmt::format("linear with a {} bias for {} outputs", shape_text(b.type->shape), plan.n)};
    }
    plan.columns.push_back({.input = b.index, .stride = 1, .name = contract_name(g, b)});
  }
  return ok_status();
}

// A tensor the epilogue reads per output column: fp32, contiguous, every dimension but the last 1, the
// last N (one value per column) or 1 (one number). Returns its stride, or the reason it is not one.
std::string column_stride(const OpGraph& g, const Node& t, int64_t n, std::size_t out_rank, int64_t& stride) {
  const std::string what = fmt::format("{} {}", t.op == Op::param ? "parameter" : "input", contract_name(g, t));
  if (t.scalar)
    return fmt::format("{} is a Python number passed to forward() (the epilogue seed reads numbers written "
                       "in the module)", what);
  if (!t.type || t.type->dtype != "float32" || !t.type->contiguous)
    return fmt::format("{} is not a contiguous float32 tensor", what);
  const auto& s = t.type->shape;
  bool column = s.size() <= out_rank;
  for (std::size_t i = 0; column && i + 1 < s.size(); ++i) column = s[i] == 1;
  const int64_t last = s.empty() ? 1 : s.back();
  if (!column || (last != n && last != 1))
    return fmt::format("{} is {}, not one value per output column ({}) or one number: the epilogue seed reads "
                       "nothing else",
                       what, shape_text(s), n);
  stride = last == n && n != 1 ? 1 : 0;
  return "";
}

bool is_product(const Node& n) { return n.op == Op::linear || n.op == Op::matmul; }

// A reduction over one dimension: the node whose value is the result (a getitem of torch.max's pair), the op,
// the reduced value and the dimension (-1: over everything, or over `several` dimensions at once).
struct RowReduction {
  int node = 0;
  RowReduce op = RowReduce::none;
  int input = 0;
  int64_t dim = -1;
  std::size_t several = 0;  // a list of dimensions (`dim=(0, 1)`): how many; 0 otherwise
};

std::optional<RowReduction> row_reduction(const OpGraph& g, const Node& n) {
  const Node* src = &n;
  Op op = n.op.op();
  if (n.op == Op::getitem && !n.args.empty() && n.args[0].ref) {
    const Node& pair = g.node(*n.args[0].ref);
    const double* index = number(n, "index");
    if ((pair.op != Op::max && pair.op != Op::min) || !index || *index != 0) return std::nullopt;
    src = &pair;
    op = pair.op.op();
  } else if (n.op == Op::amax || n.op == Op::amin) {
    op = n.op == Op::amax ? Op::max : Op::min;
  } else if (n.op != Op::sum && n.op != Op::mean && n.op != Op::logsumexp &&
             !((n.op == Op::max || n.op == Op::min) && n.type)) {  // a max without a dim: of everything
    return std::nullopt;
  }
  if (src->args.empty() || !src->args[0].ref || !is_none(*src, "dtype")) return std::nullopt;
  const Node& x = g.node(*src->args[0].ref);
  const std::size_t rank = x.type ? x.type->shape.size() : 0;
  auto dim = dim_of(*src, rank);
  const RowReduce reduce = op == Op::sum    ? RowReduce::sum
                           : op == Op::mean ? RowReduce::mean
                           : op == Op::max  ? RowReduce::max
                           : op == Op::min  ? RowReduce::min
                                            : RowReduce::logsumexp;
  const std::size_t count = dim_count(*src);
  return RowReduction{.node = n.id, .op = reduce, .input = x.id, .dim = dim ? *dim : -1,
                      .several = count > 1 ? count : 0};
}

// The graph with every reduction over dimensions of size 1 made an identity: KernelBench 18 takes the max,
// mean and logsumexp of a (M, 1) sum, which change nothing (logsumexp of one value is that value exactly).
OpGraph without_trivial_reductions(const OpGraph& g) {
  OpGraph out = g;
  for (Node& n : out.nodes) {
    auto r = row_reduction(g, n);
    if (!r || r->dim < 0) continue;
    const Node& x = g.node(r->input);
    const auto d = static_cast<std::size_t>(r->dim);
    if (!x.type || d >= x.type->shape.size() || x.type->shape[d] != 1) continue;
    n.op = Op::identity;
    n.args = {Operand{.ref = r->input}};
    n.params.clear();
  }
  return out;
}

// GroupNorm / training-mode BatchNorm of the (M, N) epilogue, its weight and bias, then the pointwise chain
// from it to the output (`post`, which may read more column operands but not the product again).
Status match_norm_after(const OpGraph& g, const Node& norm, const Node& out, const Node& prod, GemmPlan& plan) {
  const auto& shape = prod.type->shape;
  if (shape.size() != 2 || !out.type || out.type->shape != shape || out.type->dtype != "float32") {
    return Error{fmt::format("{} of a {} product (the epilogue seed normalises a 2-d product and writes it)", norm.op,
                         shape_text(shape))};
  }
  plan.norm = norm.op == Op::group_norm ? GemmNorm::group : GemmNorm::batch;
  const double* eps = number(norm, "eps");
  plan.norm_eps = eps ? *eps : 1e-5;
  if (norm.op == Op::group_norm) {
    const double* groups = number(norm, "num_groups");
    if (!groups || *groups < 1 || plan.n % static_cast<int64_t>(*groups)) {
      return Error{"group_norm's channels do not divide into its groups"};
    }
    plan.norm_groups = static_cast<int64_t>(*groups);
  } else if (flag(norm, "track_running_stats") && !flag(norm, "training")) {
    return Error{"batch_norm in eval mode uses its running statistics (no seed for that yet)"};
  }
  // The affine weight and bias (param operands after x, when the module has them), each one value per column.
  std::string value = "s";
  std::size_t next = 1;
  for (const char* which : {"has_weight", "has_bias"}) {
    if (!flag(norm, which)) continue;
    const Node* p = next < norm.args.size() && norm.args[next].ref ? &g.node(*norm.args[next].ref) : nullptr;
    ++next;
    int64_t stride = 0;
    if (!p || p->op != Op::param || !column_stride(g, *p, plan.n, 2, stride).empty() || stride != 1) {
      return Error{fmt::format("{}'s {} is not an (N,) float32 parameter", norm.op, which + 4)};
    }
    const std::string c = fmt::format("c{}", plan.columns.size());
    plan.columns.push_back({.input = p->index, .stride = 1, .name = contract_name(g, *p), .post = true});
    const bool weight = std::string(which) == "has_weight";
    plan.post.push_back({weight ? "s_w" : "s_b", fmt::format("{} {} {}", value, weight ? "*" : "+", c),
                         fmt::format("{} {}[n]", weight ? "*" : "+", contract_name(g, *p))});
    value = weight ? "s_w" : "s_b";
  }
  std::map<int, std::string> values{{norm.id, value}};
  // The chain after the norm: column operands, numbers and the normalised value; the product is gone by then.
  std::set<int> after;
  std::vector<int> stack{out.id};
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id == norm.id || !after.insert(id).second) continue;
    const Node& n = g.node(id);
    if (is_product(n)) {
      return Error{fmt::format("the product is used again after the {} (the epilogue seed has only the normalised "
                           "value there)",
                           norm.op)};
    }
    if (n.op == Op::input || n.op == Op::param) continue;
    for (const auto& a : n.args)
      if (a.ref) stack.push_back(*a.ref);
  }
  for (int id : after) {  // ascending: c<k> in the graph's order
    const Node& n = g.node(id);
    if (n.op != Op::input && n.op != Op::param) continue;
    int64_t stride = 0;
    if (auto why = column_stride(g, n, plan.n, 2, stride); !why.empty()) return Error{why};
    values[id] = fmt::format("c{}", plan.columns.size());
    plan.columns.push_back({.input = n.index, .stride = stride, .name = contract_name(g, n), .post = true});
  }
  auto post = emit_chain(g, out.id, values, "q", plan.post);
  if (!post) {
    return Error{fmt::format("after the {}: {}", norm.op, post.error().message)};
  }
  plan.post_result = *post;
  return ok_status();
}

}  // namespace

Result<GemmPlan> match_gemm_epilogue(const OpGraph& graph) {
  const OpGraph g = without_trivial_reductions(graph);
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  // The one matrix product the output depends on (counting those behind it: 45's linear(sigmoid(linear(x)))).
  int products = 0;
  for (int id : depends_on(g, out->id)) products += is_product(g.node(id));
  if (products != 1) {
    return Error{products == 0 ? "no matrix product"
                           : fmt::format("{} matrix products (the epilogue seed fuses one)", products)};
  }
  // At most one reduction between the product and the output: gemm_epilogue_reduce.
  std::vector<RowReduction> reductions;
  for (int id : depends_on(g, out->id, is_product))
    if (auto r = row_reduction(g, g.node(id))) reductions.push_back(*r);
  if (reductions.size() > 1) {
    return Error{fmt::format("{} reductions after the product (the epilogue seed takes one)", reductions.size())};
  }
  const RowReduction* red = reductions.empty() ? nullptr : &reductions[0];
  // Or at most one GroupNorm / BatchNorm: gemm_epilogue_norm.
  std::vector<int> norms;
  for (int id : depends_on(g, out->id, is_product))
    if (g.node(id).op == Op::group_norm || g.node(id).op == Op::batch_norm) norms.push_back(id);
  if (norms.size() > 1 || (red && !norms.empty())) {
    return Error{fmt::format("{} norms and {} reductions after the product (the epilogue seed takes one of either)",
                         norms.size(), reductions.size())};
  }
  const Node* norm = norms.empty() ? nullptr : &g.node(norms[0]);
  if (norm && (norm->args.empty() || !norm->args[0].ref)) {
    return Error{fmt::format("{} without an operand", norm->op)};
  }
  // What the epilogue computes per product element.
  const Node& root = red ? g.node(red->input) : norm ? g.node(*norm->args[0].ref) : *out;
  // The epilogue's operands: what the root reaches without passing through the product.
  std::vector<int> leaves;
  int prod_id = -1;
  for (int id : depends_on(g, root.id, is_product)) {
    const Node& n = g.node(id);
    if (is_product(n)) prod_id = id;
    if (n.op == Op::input || n.op == Op::param) leaves.push_back(id);
  }
  if (prod_id < 0) {
    return Error{"the reduction is not of the matrix product"};
  }
  const Node& prod = g.node(prod_id);
  GemmPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  if (auto s = prod.op == Op::linear ? match_linear(g, prod, plan) : match_matmul(g, prod, plan); !s)
    return s.error();
  if (plan.batch != 1) {
    return Error{"a batched matrix product with an epilogue (the epilogue seed has one (M, K) @ (K, N))"};
  }
  if (!prod.type || !root.type || root.type->shape != prod.type->shape || root.type->dtype != "float32") {
    return Error{fmt::format("the {} is {} while the product is {}: the epilogue seed computes one value per product "
                         "element{}",
                         red ? "reduced value" : norm ? "normalised value" : "output", root.type ? shape_text(root.type->shape) : "not a tensor",
                         prod.type ? shape_text(prod.type->shape) : "untyped",
                         red ? "" : " (or reduces them over each row)")};
  }
  if (red) {
    const auto& s = prod.type->shape;
    if (red->several) {
      return Error{fmt::format("{} over {} dimensions at once of the {} product (the epilogue seed reduces each row, "
                               "the last dim)",
                               row_reduce_name(red->op), red->several, shape_text(s))};
    }
    if (red->dim != static_cast<int64_t>(s.size()) - 1) {
      return Error{fmt::format("{} over dim {} of the {} product (the epilogue seed reduces each row, the last dim)",
                           row_reduce_name(red->op), red->dim, shape_text(s))};
    }
    if (out->type && out->type->shape == s) {
      return Error{fmt::format("the {} over each row is used with the product's elements again (a reduction in the "
                           "middle of the epilogue has no seed yet)",
                           row_reduce_name(red->op))};
    }
    if (!out->type || out->type->dtype != "float32" || product(out->type->shape, 0, out->type->shape.size()) != plan.m) {
      return Error{"the output is not one value per row of the product"};
    }
  }
  // The product's element y (the linear's bias added) and each column operand as the statements see them.
  std::map<int, std::string> values;
  std::string y = "y";
  if (!plan.columns.empty()) {
    plan.epilogue.push_back({"y_b", "y + c0", fmt::format("+ {}[n]", plan.columns[0].name)});
    y = "y_b";
  }
  values[prod.id] = y;
  const std::size_t rank = prod.type->shape.size();
  for (int id : leaves) {
    const Node& t = g.node(id);
    int64_t stride = 0;
    if (auto why = column_stride(g, t, plan.n, rank, stride); !why.empty()) return Error{why};
    values[id] = fmt::format("c{}", plan.columns.size());
    plan.columns.push_back({.input = t.index, .stride = stride, .name = contract_name(g, t)});
  }
  auto result = emit_chain(g, root.id, values, "v", plan.epilogue);
  if (!result) return result.error();
  plan.result = *result;
  if (norm) {
    if (auto s = match_norm_after(g, *norm, *out, prod, plan); !s) return s.error();
  }
  if (red) {
    plan.reduce = red->op;
    plan.affine_epilogue = affine_in(g, prod.id, root.id);
    auto post = emit_chain(g, out->id, {{red->node, "s"}}, "q", plan.post);
    if (!post) {
      return Error{fmt::format("after the {}: {}", row_reduce_name(red->op), post.error().message)};
    }
    plan.post_result = *post;
  }
  plan.pattern = text_of(graph, graph.outputs[0]);
  // The library GEMM with the epilogue fused when the product is large enough, else the tiled GEMM (GEMV and
  // split K refuse an epilogue); kernel_reason says which and why.
  choose_gemm_kernel(plan);
  return plan;
}

}  // namespace cutegen::seed
