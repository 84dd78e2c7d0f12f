#include "seed/routes/then/batch_passes.h"

#include <set>
#include <vector>

#include <fmt/format.h>

#include "seed/graph_util.h"

namespace cutegen::seed {
namespace {

// The ids of forward input 0 and of every node computed from it, in execution order.
std::vector<int> from_input0(const OpGraph& g) {
  std::set<int> seen;
  std::vector<int> ids;
  for (const Node& n : g.nodes) {
    bool reads = n.op == Op::input && n.index == 0 && !n.scalar;
    for (const Operand& a : n.args) reads = reads || (a.ref && seen.count(*a.ref));
    if (reads) {
      seen.insert(n.id);
      ids.push_back(n.id);
    }
  }
  return ids;
}

// The rank of the op's first tensor operand: what its `dim` arguments count in.
std::size_t operand_rank(const OpGraph& g, const Node& n) {
  for (const Operand& a : n.args)
    if (a.ref && g.node(*a.ref).type) return g.node(*a.ref).type->shape.size();
  return n.type ? n.type->shape.size() : 0;
}

}  // namespace

std::string batch_mixing_reason(const OpGraph& g) {
  if (g.num_inputs != 1) return fmt::format("forward() takes {} inputs (the passes slice x alone)", g.num_inputs);
  const std::vector<int> ids = from_input0(g);
  if (ids.empty() || !g.node(ids.front()).type || g.node(ids.front()).type->shape.empty())
    return "forward input 0 is not a tensor with a batch dimension";
  const int64_t batch = g.node(ids.front()).type->shape[0];
  for (int id : ids) {
    const Node& n = g.node(id);
    // A value without a tensor type is a tuple (max with a dim: values and indices), read through getitem nodes,
    // which have one; its dim is checked below.
    if (n.type && (n.type->shape.empty() || n.type->shape[0] != batch))
      return fmt::format("{} does not keep the batch ({}) as its dimension 0", n.op, batch);
    const std::string& op = n.op.spelling();
    if (n.op != Op::conv_transpose &&
        (op.find("permute") != std::string::npos || op.find("transpose") != std::string::npos ||
         op.find("swapaxes") != std::string::npos || op.find("movedim") != std::string::npos))
      return fmt::format("{} may move the batch dimension", n.op);
    if (n.op == Op::batch_norm && flag(n, "training"))
      return "batch_norm in training mode mixes the images (batch statistics)";
    if (n.op == Op::layer_norm) {
      const double* normalized = number(n, "normalized_ndim");
      if (!normalized || !n.type || *normalized >= static_cast<double>(n.type->shape.size()))
        return "layer_norm over the batch dimension too";
    }
    const std::size_t rank = operand_rank(g, n);
    for (const char* key : {"dim", "dim0", "dim1"}) {
      if (!n.params.count(key)) continue;
      auto dims = std::string(key) == "dim" ? dims_of(n, rank) : std::optional<std::vector<int64_t>>();
      if (std::string(key) != "dim")
        if (auto d = dim_of(n, rank, key)) dims = std::vector<int64_t>{*d};
      if (dims && (dims->empty() || dims->front() <= 0))  // sorted: 0 or an unreadable -1 first
        return fmt::format("{} over dimension 0, the batch", n.op);
    }
  }
  return "";
}

OpGraph graph_with_batch(const OpGraph& g, int64_t images) {
  OpGraph scaled = g;
  for (int id : from_input0(g)) {
    Node& n = scaled.nodes[static_cast<std::size_t>(id)];
    if (n.type && !n.type->shape.empty()) n.type->shape[0] = images;
  }
  return scaled;
}

}  // namespace cutegen::seed
