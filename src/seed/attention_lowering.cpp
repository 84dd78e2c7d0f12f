#include "seed/attention_lowering.h"

#include <cmath>
#include <map>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "seed/graph_util.h"

namespace cutegen::seed {
namespace {

// Why the node is not the plain attention the lowering computes, naming the argument; "" when it is.
std::string argument_refusal(const Node& n) {
  if (flag(n, "has_attn_mask"))
    return "scaled_dot_product_attention with an attn_mask: only attn_mask=None is lowered";
  if (const double* p = number(n, "dropout_p"); !p || *p != 0.0)
    return fmt::format("scaled_dot_product_attention with dropout_p={}: only dropout_p=0 is lowered (a random mask "
                       "on every call)",
                       n.params.count("dropout_p") ? param_text(n.params.at("dropout_p")) : "absent");
  if (flag(n, "is_causal")) return "scaled_dot_product_attention with is_causal=True: only is_causal=False is lowered";
  if (flag(n, "enable_gqa"))
    return "scaled_dot_product_attention with enable_gqa=True: only enable_gqa=False is lowered";
  if (!is_none(n, "scale")) {
    const double* s = number(n, "scale");
    if (!s || !std::isfinite(*s))
      return fmt::format("scaled_dot_product_attention with scale={}: only None or a finite number is lowered",
                         param_text(n.params.at("scale")));
  }
  return "";
}

const Node* operand_node(const OpGraph& g, const Node& n, std::size_t i) {
  if (i >= n.args.size() || !n.args[i].ref) return nullptr;
  const Node& a = g.node(*n.args[i].ref);
  return a.type ? &a : nullptr;
}

// The shapes of (..., L, E) query, (..., S, E) key and (..., S, Ev) value with the same leading dimensions: the
// batched products take nothing else (no broadcast batch).
std::string shape_refusal(const Node* q, const Node* k, const Node* v) {
  if (!q || !k || !v) return "scaled_dot_product_attention of a query, key or value without a tensor type";
  const auto &qs = q->type->shape, &ks = k->type->shape, &vs = v->type->shape;
  if (qs.size() < 2 || ks.size() != qs.size() || vs.size() != qs.size())
    return fmt::format("scaled_dot_product_attention of query {}, key {} and value {}: the lowering needs tensors of "
                       "one rank, at least 2",
                       shape_text(qs), shape_text(ks), shape_text(vs));
  const std::size_t r = qs.size();
  bool same = ks[r - 1] == qs[r - 1] && vs[r - 2] == ks[r - 2];
  for (std::size_t d = 0; d + 2 < r; ++d) same = same && ks[d] == qs[d] && vs[d] == qs[d];
  if (!same)
    return fmt::format("scaled_dot_product_attention of query {}, key {} and value {}: the lowering needs the same "
                       "leading dimensions (no broadcast), key's last as query's and value's rows as key's",
                       shape_text(qs), shape_text(ks), shape_text(vs));
  return "";
}

}  // namespace

Result<LoweredGraph> lower_attention(const OpGraph& g) {
  LoweredGraph out{.graph = g};
  bool any = false;
  for (const Node& n : g.nodes) any = any || (n.op == Op::scaled_dot_product_attention && n.known);
  if (!any) return out;
  OpGraph& lowered = out.graph;
  lowered.nodes.clear();
  std::map<int, int> new_id;  // old id -> the id of the node holding its value
  auto remap = [&](Operand o) {
    if (o.ref) o.ref = new_id.at(*o.ref);
    return o;
  };
  auto push = [&](Node node) {
    node.id = static_cast<int>(lowered.nodes.size());
    lowered.nodes.push_back(std::move(node));
    return lowered.nodes.back().id;
  };
  for (const Node& n : g.nodes) {
    // An attention node the worker could not bind stays as it is: match_seed gives its note as the reason.
    if (n.op != Op::scaled_dot_product_attention || !n.known) {
      Node copy = n;
      for (Operand& a : copy.args) a = remap(a);
      new_id[n.id] = push(std::move(copy));
      continue;
    }
    if (std::string why = argument_refusal(n); !why.empty()) return Error{why};
    const Node *q = operand_node(g, n, 0), *k = operand_node(g, n, 1), *v = operand_node(g, n, 2);
    if (std::string why = shape_refusal(q, k, v); !why.empty()) return Error{why};
    if (!n.type) return Error{"scaled_dot_product_attention without a tensor type in the trace"};
    const std::vector<int64_t>& qs = q->type->shape;
    const std::size_t r = qs.size();
    std::vector<int64_t> key_t = k->type->shape, scores = qs;
    std::swap(key_t[r - 1], key_t[r - 2]);
    scores[r - 1] = k->type->shape[r - 2];
    const double* given = number(n, "scale");
    // torch's default: 1 / sqrt(E), E the query's last dimension
    const double scale = given ? *given : 1.0 / std::sqrt(static_cast<double>(qs[r - 1]));
    const std::string dtype = n.type->dtype;
    auto value = [](int id) { return Operand{.ref = id}; };

    Node t{.name = n.name + "_key_t", .op = Op::transpose, .args = {remap(n.args[1])},
           .params = {{"dim0", -2.0}, {"dim1", -1.0}}, .type = TensorType{k->type->dtype, key_t, false}};
    const int t_id = push(std::move(t));
    Node s{.name = n.name + "_scores", .op = Op::matmul, .args = {remap(n.args[0]), value(t_id)},
           .type = TensorType{dtype, scores, true}};
    const int s_id = push(std::move(s));
    Node m{.name = n.name + "_scaled", .op = Op::mul, .args = {value(s_id), Operand{.value = scale}},
           .type = TensorType{dtype, scores, true}};
    const int m_id = push(std::move(m));
    Node p{.name = n.name + "_weights", .op = Op::softmax, .args = {value(m_id)},
           .params = {{"dim", -1.0}, {"dtype", std::monostate{}}}, .type = TensorType{dtype, scores, true}};
    const int p_id = push(std::move(p));
    Node o{.name = n.name, .op = Op::matmul, .args = {value(p_id), remap(n.args[2])}, .type = n.type};
    new_id[n.id] = push(std::move(o));
  }
  for (Operand& o : lowered.outputs) o = remap(o);
  out.lowered = true;
  return out;
}

}  // namespace cutegen::seed
