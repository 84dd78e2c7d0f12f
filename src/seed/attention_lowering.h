#pragma once
// Attention lowered into ops the route table already seeds (docs/seed.md, "Attention"). The worker traces
// F.scaled_dot_product_attention as the one op forward() called, its arguments bound; here, before the table's
// walk, each such node becomes what it computes --
//   transpose(key, -2, -1), matmul(query, that), mul(by the scale), softmax(dim=-1), matmul(with value)
// -- so the routes that seed products, pointwise chains and softmaxes (and the chains of them, gemm_then) decide
// its kernel as they decide any graph's. A rewrite here rather than in the worker: the trace stays what the
// problem wrote (a user reading it sees the attention call), and the decision of which arguments the seed can take
// is C++'s, made once with a reason a user reads.
#include <string>

#include "common/result.h"
#include "seed/op_graph.h"

namespace cutegen::seed {

struct LoweredGraph {
  OpGraph graph;
  bool lowered = false;  // some node was an attention op
};

// The graph with every scaled_dot_product_attention node replaced by its ops, the ids renumbered (a node's id is
// its position). Error: the one-line reason an attention node has no such lowering, naming the argument
// (`attn_mask`, `dropout_p`, `is_causal`, `enable_gqa`, `scale`) or the shapes.
Result<LoweredGraph> lower_attention(const OpGraph& g);

// What `cutegen seed` says before the chain's own line when the graph was lowered.
inline constexpr const char* kAttentionLoweredText =
    "attention (scaled_dot_product_attention lowered to a batched product with key transposed, a scale, a row "
    "softmax and a product with value): ";

}  // namespace cutegen::seed
