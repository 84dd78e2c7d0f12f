#pragma once
// The seed stage's one vocabulary of op names: every op the matchers and the route table tell apart, as the
// worker's trace spells it (python/cutegen_worker/op_graph.py), parsed once when the graph is read
// (OpName). Matchers compare `node.op == Op::matmul`, never a string, so a misspelt name is a compile error
// and the list of ops the seed knows by name is this file. Pointwise ops are not here: they are looked up
// by spelling in their formula table (pointwise_ops.h), which is itself the vocabulary of those.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace cutegen::seed {

enum class Op : std::uint8_t {
  other,  // a pointwise op of the formula table, or a spelling the worker did not normalise (torch.chunk)
  // leaves
  input, param, constant,
  // arithmetic the structured matchers read (their formulas are the pointwise table's)
  add, sub, mul, div, identity,
  // matrix products and what wraps them
  matmul, linear, transpose, triu, tril,
  // attention: lowered to the products and a softmax before any route reads the graph (attention_lowering.h)
  scaled_dot_product_attention,
  // rows
  softmax, log_softmax, logsumexp,
  // reductions over a dimension (max/min with a dim give a (values, indices) pair read by getitem)
  sum, mean, prod, max, min, amax, amin, argmax, argmin, getitem,
  // normalisations: the modules, and torch.norm
  layer_norm, group_norm, instance_norm, batch_norm, norm,
  // losses
  mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div, cross_entropy, triplet_margin_loss,
  // scans, and what an exclusive scan is written with (torch.cat of zeros and a narrowed cumsum)
  cumsum, cumprod, flip, cat, narrow, zeros_like,
  // windows
  max_pool, avg_pool, conv, conv_transpose,
  // shapes
  unsqueeze,  // the last: ops_test walks input..unsqueeze
};

// The trace's spelling of `op` ("" for Op::other).
std::string_view op_spelling(Op op);
// The Op a spelling names; Op::other for any other spelling.
Op op_named(std::string_view spelling);

// Families of ops, each the trigger of routes in the table (route_table.cpp).
bool is_reduction(Op op);       // sum mean prod max min amax amin argmax argmin
bool is_norm_module(Op op);     // layer_norm group_norm instance_norm batch_norm
bool is_loss_function(Op op);   // mse_loss l1_loss smooth_l1_loss huber_loss kl_div
bool is_leaf(Op op);            // input param constant

// A node's op: the trace's spelling (for people, and the pointwise table) and the Op it names.
class OpName {
 public:
  OpName() = default;
  OpName(std::string spelling) : spelling_(std::move(spelling)), op_(op_named(spelling_)) {}  // NOLINT: implicit
  OpName(const char* spelling) : OpName(std::string(spelling)) {}                             // NOLINT: implicit
  OpName(Op op) : spelling_(op_spelling(op)), op_(op) {}                                      // NOLINT: implicit

  Op op() const { return op_; }
  const std::string& spelling() const { return spelling_; }
  bool operator==(Op op) const { return op_ == op; }
  bool operator==(const OpName& other) const { return spelling_ == other.spelling_; }

 private:
  std::string spelling_;
  Op op_ = Op::other;
};

}  // namespace cutegen::seed

// An OpName prints as its spelling.
template <>
struct fmt::formatter<cutegen::seed::OpName> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const cutegen::seed::OpName& name, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(name.spelling(), ctx);
  }
};
