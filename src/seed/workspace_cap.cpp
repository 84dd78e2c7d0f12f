#include "seed/workspace_cap.h"

#include <algorithm>

#include "seed/graph_util.h"
#include "seed/plan_parts.h"

namespace cutegen::seed {

int64_t judge_workspace_cap(const OpGraph& g) {
  constexpr int64_t kFactor = 8, kFloor = int64_t{16} << 20;
  auto bytes = [](const Node& n) -> int64_t {
    if (!n.type || n.scalar) return 0;
    const std::string& d = n.type->dtype;
    const int64_t size = d == "float64" || d == "int64" ? 8 : d == "float16" || d == "bfloat16" ? 2 : d == "bool" ? 1 : 4;
    return product(n.type->shape, 0, n.type->shape.size()) * size;
  };
  int64_t io = 0;
  for (const Node& n : g.nodes)
    if (n.op == Op::input || n.op == Op::param) io += bytes(n);
  for (const Operand& o : g.outputs)
    if (o.ref) io += bytes(g.node(*o.ref));
  return std::min(kWorkspaceCeiling, std::max(kFloor, kFactor * io));
}

}  // namespace cutegen::seed
