#pragma once
// A chain in passes over the batch (docs/seed.md, "A convolution, then more seeds"): when a chain's results
// would not fit the judge's workspace cap for the whole batch, but every op from forward input 0 to the output
// treats each image on its own, the chain can run on kBatchChunk images at a time through one pass's
// intermediates. The matcher plans the chain for a graph traced at the pass's batch (graph_with_batch) and the
// chained file loops over the passes.
#include <cstdint>
#include <string>

#include "seed/op_graph.h"

namespace cutegen::seed {

// "" when every op that depends on forward input 0 keeps the batch as its dimension 0 and computes each image
// from that image alone; else why not, naming the op ("batch_norm in training mode mixes the images (batch
// statistics)"). Only graphs whose one forward input is x qualify: another input would need its own passes.
std::string batch_mixing_reason(const OpGraph& g);
// The graph as if traced with `images` in place of the batch: dimension 0 of forward input 0 and of every value
// computed from it.
OpGraph graph_with_batch(const OpGraph& g, int64_t images);

}  // namespace cutegen::seed
