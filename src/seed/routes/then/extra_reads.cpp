#include "seed/routes/then/extra_reads.h"

#include <set>

namespace cutegen::seed {

std::vector<int> reads_across(const OpGraph& g, const std::vector<int>& reach, const Node& c) {
  std::set<int> reads;
  for (int id : reach) {
    if (id <= c.id) continue;
    for (const Operand& a : g.node(id).args) {
      if (!a.ref || *a.ref == c.id || *a.ref > c.id) continue;
      const Node& r = g.node(*a.ref);
      if (!is_leaf(r.op.op()) || (r.op == Op::input && r.index == 0)) reads.insert(r.id);
    }
  }
  return {reads.begin(), reads.end()};
}

const Node& identity_base(const OpGraph& g, const Node& n) {
  const Node* v = &n;
  while (v->op == Op::identity && !v->args.empty() && v->args[0].ref) v = &g.node(*v->args[0].ref);
  return *v;
}

std::optional<CutReads> cut_reads(const OpGraph& g, const std::vector<int>& across) {
  CutReads cut;
  std::set<int> nodes;
  for (int id : across) {
    const Node& base = identity_base(g, g.node(id));
    if (base.op == Op::input && base.index == 0 && !base.scalar) {
      nodes.insert(base.id);
    } else if (is_leaf(base.op.op())) {
      if (base.scalar) return std::nullopt;  // the leaves other than input 0 are the step's inputs already
    } else {
      const Node& n = g.node(id);
      if (!n.type || n.type->dtype != "float32" || !n.type->contiguous) return std::nullopt;
      nodes.insert(id);
      cut.stored_by_before.push_back(id);
    }
  }
  cut.nodes.assign(nodes.begin(), nodes.end());
  for (int id : cut.nodes) cut.reads.push_back({.node = id});
  return cut;
}

}  // namespace cutegen::seed
