#pragma once
// The judge's workspace cap for a traced problem, as the seed stage plans against it: a seed whose kernel asks
// for more than this is refused at load (python/cutegen_worker/memory.py), so the routes size their choices
// (the library convolution's path, a chain's intermediates) to fit it.
#include <cstdint>

#include "seed/op_graph.h"

namespace cutegen::seed {

// 8x the bytes of the graph's inputs, parameters and output, at least 16 MiB, at most kWorkspaceCeiling.
int64_t judge_workspace_cap(const OpGraph& g);

}  // namespace cutegen::seed
