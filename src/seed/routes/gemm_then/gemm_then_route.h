#pragma once
// The gemm_then route (docs/seed.md, "A matrix product, then more seeds"): a matrix product on the library's
// 3xTF32 GEMM -- or, for a product the library GEMM does not take, the seed's tiled GEMM -- with the epilogue
// gemm_epilogue fuses into it, then whatever the rest of forward() is, when the
// route table seeds that rest with the product's result as its input -- a softmax, a pooling over the
// features, a second Linear, a reduction after a norm (KernelBench level 2's GEMM-first graphs that
// gemm_epilogue alone refuses). The conv_then route's analogue; both chain through routes/then/then_chain.h.
#include "seed/route.h"
#include "seed/routes/gemm_then/gemm_then_plan.h"

namespace cutegen::seed {

// The split: the latest value y (through views: x.unsqueeze(1)) such that gemm_epilogue seeds the graph that
// returns y on the library GEMM or the tiled one, the rest reads nothing before y but leaves other than forward
// input 0, and `second`'s walk seeds the rest, with y as forward input 0, in at most kMaxThenSteps steps. Error:
// why not -- the rest's reason after the largest head on the library GEMM, or gemm_epilogue's for the whole graph.
Result<GemmThenPlan> match_gemm_then(const OpGraph& g, SecondSeedMatcher second);
std::string gemm_then_description(const GemmThenPlan& plan);
std::string gemm_then_pattern(const GemmThenPlan& plan);
Result<std::string> emit_gemm_then(const GemmThenPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
