#pragma once
// The exclusive cumsum as forward() writes it with torch.cat (docs/seed.md, "Scans"): y has x's shape, its first
// position along dimension d is 0 and position p is the sum of x's positions before p. Recognised spellings, with
// z = zeros_like(...) of x's shape but extent 1 along d and n = x's extent along d:
//   cat((z, cumsum(x.narrow(d, 0, n - 1), d)), d)        KernelBench level 1's 92
//   cat((z, cumsum(x, d).narrow(d, 0, n - 1)), d)
//   cumsum(shifted, d), shifted = cat((z, x.narrow(d, 0, n - 1)), d) or cat((z, x), d).narrow(d, 0, n)
// Each is the inclusive cumsum of x shifted one position along d (the shifted value's first position 0).
#include <optional>

#include "common/result.h"
#include "seed/op_graph.h"

namespace cutegen::seed {

struct ExclusiveScan {
  const Node* scan = nullptr;  // the cumsum (its dim and dtype arguments)
  int source = -1;             // x: the unshifted value, of the output's shape
};

// The output `cat` as an exclusive cumsum of x, or why it is not one.
Result<ExclusiveScan> match_exclusive_cat(const OpGraph& g, const Node& cat);
// `v`, the value a cumsum over `dim` reads, as x shifted one position along dim (the last two forms above):
// x's id, or nullopt when v is no such shift.
std::optional<int> shifted_source(const OpGraph& g, const Node& v, int64_t dim);

}  // namespace cutegen::seed
