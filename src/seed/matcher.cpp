#include "seed/matcher.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/gemm_epilogue_matcher.h"
#include "seed/graph_util.h"
#include "seed/library_reduce.h"
#include "seed/library_rmsnorm.h"
#include "seed/library_softmax.h"
#include "seed/pointwise_ops.h"
#include "seed/structured_matcher.h"

namespace cutegen::seed {
namespace {

bool is_leaf(const std::string& op) { return op == "input" || op == "param" || op == "constant"; }

bool float_dtype(const std::string& d) { return d == "float32" || d == "float16" || d == "bfloat16"; }

// Nodes the outputs depend on, ascending (= execution order).
std::vector<int> reachable(const OpGraph& g) {
  std::set<int> seen;
  std::vector<int> stack;
  for (const auto& o : g.outputs)
    if (o.ref) stack.push_back(*o.ref);
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    for (const auto& a : g.node(id).args)
      if (a.ref) stack.push_back(*a.ref);
  }
  return {seen.begin(), seen.end()};
}

std::string param_text(const ParamValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "None";
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (const double* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  return fmt::format("'{}'", std::get<std::string>(v));
}

// `op(a, b, key=value)`, arguments spelled by `spell`.
template <class Spell>
std::string call_text(const Node& n, Spell spell) {
  std::vector<std::string> parts;
  for (const auto& a : n.args) parts.push_back(a.ref ? spell(*a.ref) : fmt::format("{}", a.value));
  for (const auto& [k, v] : n.params) {
    if (k == "alpha" && (n.op == "add" || n.op == "sub") && param_text(v) == "1") continue;  // the default
    if (std::holds_alternative<std::monostate>(v)) continue;  // None: clamp's missing bound, div's rounding
    parts.push_back(fmt::format("{}={}", k, param_text(v)));
  }
  return fmt::format("{}({})", n.op, fmt::join(parts, ", "));
}

class PointwiseMatcher {
 public:
  explicit PointwiseMatcher(const OpGraph& g) : g_(g) {}

  // The plan, or the reason there is none.
  std::optional<PointwisePlan> match(std::string& reason) {
    // An op outside the table is the decisive reason; outputs, shapes and dtypes matter once every op is known.
    for (int id : reachable(g_)) {
      if (auto why = unknown_op(g_.node(id)); !why.empty()) {
        reason = why;
        return std::nullopt;
      }
    }
    if (g_.outputs.size() != 1) {
      reason = fmt::format("forward() returns {} outputs; the pointwise seed writes one", g_.outputs.size());
      return std::nullopt;
    }
    const Operand& out = g_.outputs[0];
    if (!out.ref) {
      reason = "forward() returns a number, not a tensor";
      return std::nullopt;
    }
    const Node& result = g_.node(*out.ref);
    if (!result.type) {
      reason = "forward() does not return a tensor";
      return std::nullopt;
    }
    plan_.dtype = result.type->dtype;
    plan_.shape = result.type->shape;
    if (!float_dtype(plan_.dtype)) {
      reason = fmt::format("the output is {}; the pointwise seed handles float32, float16 and bfloat16", plan_.dtype);
      return std::nullopt;
    }
    plan_.num_contract_inputs = g_.num_inputs + static_cast<int>(g_.params.size());
    const std::vector<int> needed = reachable(g_);
    for (int id : needed) {
      if (auto why = visit(g_.node(id)); !why.empty()) {
        reason = why;
        return std::nullopt;
      }
    }
    if (plan_.tensor_inputs.empty()) {
      reason = "the output depends on no input tensor";
      return std::nullopt;
    }
    plan_.result = value_of(out);
    plan_.pattern = nested(*out.ref);
    return plan_;
  }

 private:
  std::string check_tensor(const Node& n, const std::string& what) const {
    if (!n.type) return fmt::format("{} has no tensor type in the trace", what);
    if (n.type->dtype != plan_.dtype)
      return fmt::format("{} is {} while the output is {} (mixed dtypes have no seed yet)", what, n.type->dtype,
                         plan_.dtype);
    if (n.type->shape != plan_.shape)
      return fmt::format("{} is {} while the output is {} (broadcasting has no seed yet)", what,
                         shape_text(n.type->shape), shape_text(plan_.shape));
    if (!n.type->contiguous) return fmt::format("{} is not contiguous", what);
    return "";
  }

  static std::string unknown_op(const Node& n) {
    if (is_leaf(n.op) && n.known) return "";
    if (n.known && pointwise_arity(n.op) > 0) return "";
    if (!n.note.empty()) return fmt::format("{}: {}", n.op, n.note);
    return fmt::format("{} is not a pointwise op the seed knows", n.op);
  }

  std::string visit(const Node& n) {
    if (n.op == "input" || n.op == "param") {
      std::string name = n.op == "param" && n.index - g_.num_inputs < static_cast<int>(g_.params.size())
                             ? g_.params[static_cast<std::size_t>(n.index - g_.num_inputs)]
                             : n.name;
      if (n.scalar) {
        if (n.scalar_dtype != "float64" && n.scalar_dtype != "int64" && n.scalar_dtype != "bool")
          return fmt::format("forward argument {} is a {} scalar", name, n.scalar_dtype);
        ScalarOperand s{.index = n.index, .dtype = n.scalar_dtype, .member = fmt::format("s{}", n.index), .name = name};
        values_[n.id] = s.member;
        plan_.scalars.push_back(s);
        return "";
      }
      if (auto why = check_tensor(n, (n.op == "param" ? "parameter " : "input ") + name); !why.empty()) return why;
      values_[n.id] = fmt::format("x{}", plan_.tensor_inputs.size());
      plan_.tensor_inputs.push_back(n.index);
      plan_.tensor_names.push_back(name);
      return "";
    }
    if (n.op == "constant") {
      auto it = n.params.find("value");
      const double* v = it == n.params.end() ? nullptr : std::get_if<double>(&it->second);
      if (!v) return fmt::format("forward argument {} has a default that is not a number", n.name);
      values_[n.id] = float_literal(*v);
      constants_[n.id] = *v;
      return "";
    }
    if (auto why = check_tensor(n, fmt::format("{} ({})", n.op, n.name)); !why.empty()) return why;
    std::vector<ExprArg> args;
    for (const auto& a : n.args) {
      if (a.ref) {
        auto c = constants_.find(*a.ref);
        args.push_back({values_.at(*a.ref), c == constants_.end() ? std::nullopt : std::optional<double>(c->second)});
      } else {
        args.push_back({float_literal(a.value), a.value});
      }
    }
    auto expr = pointwise_expression(n.op, args, n.params);
    if (!expr) return expr.error().message;
    std::string value = fmt::format("v{}", n.id);
    plan_.steps.push_back({value, *expr, call_text(n, [this](int id) { return values_.at(id); })});
    values_[n.id] = value;
    return "";
  }

  std::string value_of(const Operand& o) const { return o.ref ? values_.at(*o.ref) : float_literal(o.value); }

  // The chain as one expression over the forward arguments' names, for people.
  std::string nested(int id) const {
    const Node& n = g_.node(id);
    if (n.op == "input" || n.op == "param") {
      auto it = std::find(plan_.tensor_inputs.begin(), plan_.tensor_inputs.end(), n.index);
      if (it != plan_.tensor_inputs.end())
        return plan_.tensor_names[static_cast<std::size_t>(it - plan_.tensor_inputs.begin())];
      for (const auto& s : plan_.scalars)
        if (s.index == n.index) return s.name;
      return n.name;
    }
    if (n.op == "constant") return fmt::format("{}", constants_.at(id));
    return call_text(n, [this](int ref) { return nested(ref); });
  }

  const OpGraph& g_;
  PointwisePlan plan_;
  std::map<int, std::string> values_;
  std::map<int, double> constants_;
};

bool is_row_softmax(const std::string& op) { return op == "softmax" || op == "log_softmax"; }

// The graph is exactly y = softmax(x, dim=last) (or log_softmax) of a forward input.
std::optional<RowSoftmaxPlan> match_row_softmax(const OpGraph& g, std::string& reason) {
  if (g.outputs.size() != 1 || !g.outputs[0].ref) {
    reason = "forward() must return the one softmax";
    return std::nullopt;
  }
  const Node& n = g.node(*g.outputs[0].ref);
  if (!is_row_softmax(n.op) || n.args.size() != 1 || !n.args[0].ref) {
    reason = fmt::format("the output is not a softmax of an input (the row-softmax seed is softmax(x) alone)");
    return std::nullopt;
  }
  const Node& x = g.node(*n.args[0].ref);
  if (x.op != "input" || x.scalar || !x.type) {
    reason = fmt::format("{} of a computed value (the row-softmax seed takes a forward input)", n.op);
    return std::nullopt;
  }
  if (x.type->dtype != "float32" || !n.type || n.type->dtype != "float32") {
    reason = fmt::format("{} in {} (the row-softmax seed is float32)", n.op, x.type->dtype);
    return std::nullopt;
  }
  if (auto d = n.params.find("dtype"); d != n.params.end() && !std::holds_alternative<std::monostate>(d->second)) {
    reason = fmt::format("{} with a dtype argument", n.op);
    return std::nullopt;
  }
  const auto rank = static_cast<int64_t>(x.type->shape.size());
  auto dim = n.params.find("dim");
  const double* d = dim == n.params.end() ? nullptr : std::get_if<double>(&dim->second);
  if (!d) {
    reason = fmt::format("{} without a dim (the implicit dim is deprecated)", n.op);
    return std::nullopt;
  }
  if (rank == 0 || !x.type->contiguous || (static_cast<int64_t>(*d) != rank - 1 && static_cast<int64_t>(*d) != -1)) {
    reason = fmt::format("{} over dim {} of a {}-d tensor (the seed handles the last dimension)", n.op, *d, rank);
    return std::nullopt;
  }
  return RowSoftmaxPlan{.log = n.op == "log_softmax",
                        .shape = x.type->shape,
                        .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                        .input = x.index,
                        .pattern = fmt::format("{}({}, dim={})", n.op, x.name, static_cast<int64_t>(*d))};
}

}  // namespace

std::string SeedMatch::pattern() const {
  if (pointwise) return pointwise->pattern;
  if (row_softmax)
    return !library_softmax_refusal(*row_softmax).empty() ? row_softmax->pattern
           : library_softmax_kernel(*row_softmax) == LibrarySoftmax::ticket
               ? "library ticket softmax: " + row_softmax->pattern
               : "library cluster softmax: " + row_softmax->pattern;
  if (reduce) return library_reduce_refusal(*reduce).empty() ? "library reduce_dim: " + reduce->pattern : reduce->pattern;
  if (norm) return library_rmsnorm_refusal(*norm).empty() ? "library channel RMSNorm: " + norm->pattern : norm->pattern;
  // The route first: bench's column is 40 wide, and the tiled GEMM's plain pattern is the one without a prefix.
  if (gemm && gemm->route == GemmRoute::library) return "library 3xTF32 GEMM: " + gemm->pattern;
  if (gemm && gemm->route == GemmRoute::gemv) return "GEMV: " + gemm->pattern;
  if (gemm && gemm->route == GemmRoute::split_k) return fmt::format("split-K x{} GEMM: {}", gemm->split_k, gemm->pattern);
  if (gemm) return gemm->pattern;
  if (loss) return loss->pattern;
  if (scan) return scan->pattern;
  if (pool) return pool->pattern;
  if (depthwise_conv) return depthwise_conv->pattern;
  if (broadcast) return broadcast->pattern;
  if (cross_entropy) return cross_entropy->pattern;
  return "";
}

std::string SeedMatch::description() const {
  if (pointwise) return "pointwise chain y = " + pointwise->pattern;
  if (row_softmax)
    return !library_softmax_refusal(*row_softmax).empty() ? "row softmax y = " + row_softmax->pattern
           : library_softmax_kernel(*row_softmax) == LibrarySoftmax::ticket
               ? "row softmax (the library's ticket softmax) y = " + row_softmax->pattern
               : "row softmax (the library's cluster softmax) y = " + row_softmax->pattern;
  if (reduce)
    return library_reduce_refusal(*reduce).empty() ? "reduction (the library's reduce_dim) y = " + reduce->pattern
                                                   : "reduction y = " + reduce->pattern;
  if (norm)
    return library_rmsnorm_refusal(*norm).empty() ? "normalisation (the library's channel RMSNorm) y = " + norm->pattern
                                                  : "normalisation y = " + norm->pattern;
  if (gemm && gemm->route == GemmRoute::library) return "matrix product (the library's 3xTF32 GEMM) y = " + gemm->pattern;
  if (gemm && gemm->route == GemmRoute::gemv) return "matrix-vector product (GEMV) y = " + gemm->pattern;
  if (gemm && gemm->route == GemmRoute::split_k)
    return fmt::format("matrix product (split K x {}) y = {}", gemm->split_k, gemm->pattern);
  if (gemm && !gemm->has_epilogue()) return "matrix product y = " + gemm->pattern;
  if (gemm && !gemm->norm.empty()) return "matrix product with an epilogue and a norm y = " + gemm->pattern;
  if (gemm && !gemm->reduce.empty()) return "matrix product with an epilogue and a row reduction y = " + gemm->pattern;
  if (gemm) return "matrix product with an epilogue y = " + gemm->pattern;
  if (loss) return "loss y = " + loss->pattern;
  if (scan) return "scan y = " + scan->pattern;
  if (pool) return "pooling y = " + pool->pattern;
  if (depthwise_conv) return "depthwise convolution y = " + depthwise_conv->pattern;
  if (broadcast) return "broadcast pointwise chain y = " + broadcast->pattern;
  if (cross_entropy) return "loss y = " + cross_entropy->pattern;
  return "";
}

std::string SeedMatch::no_seed_line() const {
  if (ops.empty()) return fmt::format("no seed for this operator graph: {}", reason);
  return fmt::format("no seed for this operator graph: {} ({})", ops, reason);
}

SeedMatch match_seed(const OpGraph& graph) {
  SeedMatch m;
  if (!graph.traced) {
    m.reason = graph.reason;
    return m;
  }
  std::vector<std::string> ops;
  for (int id : reachable(graph)) {
    const std::string& op = graph.node(id).op;
    if (!is_leaf(op) && std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  m.ops = ops.empty() ? "identity" : fmt::format("{}", fmt::join(ops, ", "));
  PointwiseMatcher pointwise(graph);
  m.pointwise = pointwise.match(m.reason);
  if (m.pointwise) return m;
  // The structured pattern whose ops the graph has gives the reason worth reading.
  auto has = [&ops](auto pred) { return std::any_of(ops.begin(), ops.end(), pred); };
  if (has(is_row_softmax)) {
    m.reason.clear();
    m.row_softmax = match_row_softmax(graph, m.reason);
  } else if (has(is_gemm_op)) {
    // A product alone (maybe under triu/tril) is the plain GEMM's; anything else on it an epilogue's.
    m.reason.clear();
    const std::string last = graph.outputs.size() == 1 && graph.outputs[0].ref
                                  ? graph.node(*graph.outputs[0].ref).op : std::string();
    const bool plain = last == "matmul" || last == "triu" || last == "tril";
    m.gemm = plain ? match_gemm(graph, m.reason) : match_gemm_epilogue(graph, m.reason);
  } else if (has(is_pool_op)) {
    m.reason.clear();
    m.pool = match_pool(graph, m.reason);
  } else if (has(is_conv_op)) {
    // A dense convolution is a batched GEMM when it is 1x1; one with groups has the depthwise window kernel.
    m.reason.clear();
    if (is_dense_convolution(graph)) m.gemm = match_pointwise_conv(graph, m.reason);
    else m.depthwise_conv = match_depthwise_conv(graph, m.reason);
  } else if (has(is_scan_op)) {
    m.reason.clear();
    m.scan = match_scan(graph, m.reason);
  } else if (has([](const std::string& op) { return op == "cross_entropy"; })) {
    m.reason.clear();
    m.cross_entropy = match_cross_entropy(graph, m.reason);
  } else if (has(is_loss_op)) {
    m.reason.clear();
    m.loss = match_loss(graph, m.reason);
  } else if (has(is_norm_op) || has(is_reduce_op)) {
    std::string why_norm, why_reduce, why_loss;
    m.norm = match_norm(graph, why_norm);
    if (!m.norm) m.reduce = match_reduce(graph, why_reduce);
    if (!m.norm && !m.reduce) m.loss = match_loss(graph, why_loss);  // mean(chain(x, y)) of everything
    const bool ends_in_reduction = graph.outputs.size() == 1 && graph.outputs[0].ref &&
                                   (is_reduce_op(graph.node(*graph.outputs[0].ref).op) ||
                                    graph.node(*graph.outputs[0].ref).op == "getitem");
    // A reduction of everything that is no plain reduction is a loss that did not match, and says why.
    bool everything = false;
    if (ends_in_reduction) {
      const auto& params = graph.node(*graph.outputs[0].ref).params;
      auto dim = params.find("dim");
      everything = dim != params.end() && std::holds_alternative<std::monostate>(dim->second);
    }
    m.reason = m.matched() ? "" : ends_in_reduction ? (everything ? why_loss : why_reduce) : why_norm;
  } else if (has([](const std::string& op) { return op == "unsqueeze"; }) ||
             m.reason.find("(broadcasting has no seed yet)") != std::string::npos) {
    std::string why;
    m.broadcast = match_broadcast(graph, why);
    m.reason = m.broadcast ? "" : why;
  }
  return m;
}

}  // namespace cutegen::seed
