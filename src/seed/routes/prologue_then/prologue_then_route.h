#pragma once
// The prologue_then route (docs/seed.md, "A convolution or product after other steps"): forward() computes
// something before its first convolution or matrix product -- a pooling, a norm, an activation -- and the
// product reads that. The steps before it, the product and the steps after it are each another route's seed,
// found by the route table's own walk, chained through the workspace as conv_then chains the steps after a
// convolution.
#include "seed/route.h"
#include "seed/routes/prologue_then/prologue_then_plan.h"

namespace cutegen::seed {

// The first convolution or matrix product the output depends on (in execution order) when it reads a computed
// value -- an op's result, not a forward input, a parameter, or a view or transpose of one: the graphs this
// route decides. nullptr: there is no such product (no product, or the first reads the problem's tensors).
const Node* product_of_computed_value(const OpGraph& g);

// The cut: the product's computed operand c, where everything from the product on reads c and leaves (not forward
// input 0, whose position carries c in the graph after it). The graph that returns c is the prologue (the table's
// seed, or a chain of them cut where one value crosses), the graph after c the rest (the product's seed first:
// a convolution with its epilogue, a GEMM, then what follows). Error: the reason a user reads, naming the product.
Result<PrologueThenPlan> match_prologue_then(const OpGraph& g, SecondSeedMatcher second);
std::string prologue_then_description(const PrologueThenPlan& plan);
std::string prologue_then_pattern(const PrologueThenPlan& plan);
Result<std::string> emit_prologue_then(const PrologueThenPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
