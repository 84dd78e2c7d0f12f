#pragma once
// The conv_then route (docs/seed.md, "Convolutions"): a convolution of a forward input and its pointwise
// epilogue, then whatever the rest of forward() is, when another route seeds that rest on its own with the
// convolution's result as its input -- a norm, a pooling, a reduction, a softmax after a convolution (most of
// KernelBench level 2's convolutions). The second seed is found by the route table itself, so the route is
// given the table's walk rather than reaching up to it.
#include "seed/route.h"
#include "seed/routes/conv_then/conv_then_plan.h"

namespace cutegen::seed {

// The split: the convolution C, then the largest set of same-shape pointwise ops on C (and on inputs,
// parameters and constants) -- the head; the rest of the graph must read the head through one value y. The
// head is the conv_epilogue route's plan of the graph that returns y; the rest, with y as forward input 0, is
// `second`'s. Error: the reason either refuses, or why the graph does not split so.
Result<ConvThenPlan> match_conv_then(const OpGraph& g, SecondSeedMatcher second);
std::string conv_then_description(const ConvThenPlan& plan);
std::string conv_then_pattern(const ConvThenPlan& plan);
Result<std::string> emit_conv_then(const ConvThenPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
