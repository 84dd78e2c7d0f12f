#include "seed/route_table.h"

#include <variant>

#include "seed/graph_util.h"
#include "seed/seed.h"

#include "seed/routes/broadcast/broadcast_route.h"
#include "seed/routes/cross_entropy/cross_entropy_route.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/routes/conv_fold/conv_fold_route.h"
#include "seed/routes/conv_stats/conv_stats_route.h"
#include "seed/routes/conv_then/conv_then_route.h"
#include "seed/routes/depthwise_conv/depthwise_conv_route.h"
#include "seed/routes/gemm/gemm_route.h"
#include "seed/routes/gemm_epilogue/gemm_epilogue_route.h"
#include "seed/routes/gemm_then/gemm_then_route.h"
#include "seed/routes/loss/loss_route.h"
#include "seed/routes/norm/norm_route.h"
#include "seed/routes/pointwise/pointwise_route.h"
#include "seed/routes/pool/pool_route.h"
#include "seed/routes/prologue_then/prologue_then_route.h"
#include "seed/routes/reduce/reduce_route.h"
#include "seed/routes/row_softmax/row_softmax_route.h"
#include "seed/routes/scan/scan_route.h"
#include "seed/routes/separable_conv/separable_conv_route.h"
#include "seed/routes/triplet_loss/triplet_loss_route.h"
#include "seed/window.h"

namespace cutegen::seed {
namespace {

// The claims. Each says when its route is the graph's: mostly "the graph has one of my ops", the first such
// route deciding, so a softmax after a matmul is the softmax route's and its refusal is what a user reads.

bool is_product(Op op) { return op == Op::matmul || op == Op::linear; }
bool is_convolution(Op op) { return op == Op::conv || op == Op::conv_transpose; }
// The reductions over a dimension the reduction route takes: logsumexp too (a product's row logsumexp is the
// epilogue route's, claimed before).
bool is_dim_reduction(Op op) { return is_reduction(op) || op == Op::logsumexp; }
bool is_norm_or_reduction(Op op) { return is_norm_module(op) || op == Op::norm || is_dim_reduction(op); }

// forward() returns a reduction (or the getitem of max/min's (values, indices) pair), maybe through views.
bool ends_in_reduction(const MatchContext& c) {
  if (!c.output) return false;
  const Node& out = through_views(c.graph, *c.output);
  return is_dim_reduction(out.op.op()) || out.op == Op::getitem;
}

// ... of everything: its dim given as None.
bool reduces_everything(const MatchContext& c) {
  if (!ends_in_reduction(c)) return false;
  const Node& out = through_views(c.graph, *c.output);
  auto dim = out.params.find("dim");
  return dim != out.params.end() && std::holds_alternative<std::monostate>(dim->second);
}

Claim decide_if(bool mine) { return mine ? Claim::decide : Claim::skip; }

// Tried first, on every graph: a pointwise chain is the fastest seed there is. Its refusal is the answer
// when no other route claims the graph.
Claim claim_pointwise(const MatchContext&) { return Claim::attempt; }

bool has_convolution(const MatchContext& c) { return c.has(Op::conv) || c.has(Op::conv_transpose); }

// A softmax or a pooling after a convolution is conv_then's (the convolution first, then the softmax's or the
// pooling's own seed on its result); after a matrix product, gemm_then's.
Claim claim_row_softmax(const MatchContext& c) {
  return decide_if((c.has(Op::softmax) || c.has(Op::log_softmax)) && !has_convolution(c) && !c.has_any(is_product));
}

// A product alone (maybe under triu/tril) is the plain GEMM's; anything else on it an epilogue's, or, what the
// epilogue refuses, the product with its epilogue and then more seeds (gemm_then), whose refusal is the answer:
// the rest's reason after the product, or the epilogue's own when no split leaves the product on the library GEMM.
// A product of a product's computed result (attention lowered: softmax(Q @ K^T * s) @ V) is gemm_then's, the first
// product its head.
Claim claim_gemm(const MatchContext& c) {
  int products = 0;
  for (Op op : c.ops) products += is_product(op) ? 1 : 0;
  return decide_if(products == 1 && (c.output_is(Op::matmul) || c.output_is(Op::triu) || c.output_is(Op::tril)));
}
Claim claim_gemm_epilogue(const MatchContext& c) { return c.has_any(is_product) ? Claim::attempt : Claim::skip; }
Claim claim_gemm_then(const MatchContext& c) { return decide_if(c.has_any(is_product)); }

Claim claim_pool(const MatchContext& c) {
  return decide_if((c.has(Op::max_pool) || c.has(Op::avg_pool)) && !has_convolution(c));
}

// A convolution with groups = channels has the depthwise window kernel; what it refuses -- every dense or
// other grouped convolution, 1x1 ones included, and every transposed one -- is the library convolution's,
// whose refusal is the answer. A convolution followed by other ops is the epilogue's.
Claim claim_depthwise_conv(const MatchContext& c) { return c.has(Op::conv) ? Claim::attempt : Claim::skip; }
// A convolution of a convolution (KernelBench's depthwise-separable one): two launches through the workspace.
Claim claim_separable_conv(const MatchContext& c) {
  const bool of_convolution = c.output && !c.output->args.empty() && c.output->args[0].ref &&
                              is_convolution(c.graph.node(*c.output->args[0].ref).op.op());
  return decide_if((c.output_is(Op::conv) || c.output_is(Op::conv_transpose)) && of_convolution);
}
Claim claim_conv(const MatchContext& c) { return decide_if(c.output_is(Op::conv) || c.output_is(Op::conv_transpose)); }
// A convolution followed by other ops: its pointwise epilogue fused (conv_epilogue), or else the convolution
// with what epilogue it has, then a second seed of any route on its result (conv_then), whose refusal is the
// answer.
Claim claim_conv_epilogue(const MatchContext& c) { return has_convolution(c) ? Claim::attempt : Claim::skip; }
Claim claim_conv_then(const MatchContext& c) { return decide_if(has_convolution(c)); }
// A convolution whose pointwise ops are summed or averaged over every spatial dimension (a global average
// pooling): tried before the epilogue and conv_then routes, which take the graph when it is not linear enough to
// fold (an activation before the pooling, a strided forward convolution, ...).
Claim claim_conv_fold(const MatchContext& c) {
  return has_convolution(c) && (c.has(Op::sum) || c.has(Op::mean)) ? Claim::attempt : Claim::skip;
}
// A convolution, maybe a norm, then a mean over its planes: the norm's statistics and the mean from sums the
// convolution gathers in its epilogue (conv_stats). Tried after conv_fold (which takes a mean of what is affine in
// the convolution without running it) and before the routes that store the convolution's result.
Claim claim_conv_stats(const MatchContext& c) {
  return has_convolution(c) && c.has(Op::mean) ? Claim::attempt : Claim::skip;
}

// conv_then's and gemm_then's next seeds: the walk over this table (match_seed) for the graph after the head,
// which has the head's convolution or product no more, so a walk that comes back to a *_then route does so on a
// graph with one product fewer (KernelBench level 2's 45: a Linear after a Linear), and ends.
Result<std::shared_ptr<const MatchedPlan>> second_seed(const OpGraph& after) {
  SeedMatch m = match_seed(after);
  if (!m.matched()) return Error{m.reason.empty() ? m.no_seed_line() : m.reason};
  return m.plan;
}
Result<ConvThenPlan> match_conv_then_in_table(const OpGraph& g) { return match_conv_then(g, &second_seed); }
Result<ConvFoldPlan> match_conv_fold_in_table(const OpGraph& g) { return match_conv_fold(g, &second_seed); }
constexpr RouteDef<ConvFoldPlan> kConvFoldRoute{"conv_fold", match_conv_fold_in_table, conv_fold_description,
                                                conv_fold_pattern, emit_conv_fold};
Result<ConvStatsPlan> match_conv_stats_in_table(const OpGraph& g) { return match_conv_stats(g, &second_seed); }
constexpr RouteDef<ConvStatsPlan> kConvStatsRoute{"conv_stats", match_conv_stats_in_table, conv_stats_description,
                                                  conv_stats_pattern, emit_conv_stats};
Result<GemmThenPlan> match_gemm_then_in_table(const OpGraph& g) { return match_gemm_then(g, &second_seed); }
constexpr RouteDef<GemmThenPlan> kGemmThenRoute{"gemm_then", match_gemm_then_in_table, gemm_then_description,
                                                gemm_then_pattern, emit_gemm_then};
constexpr RouteDef<ConvThenPlan> kConvThenRoute{"conv_then", match_conv_then_in_table, conv_then_description,
                                                conv_then_pattern, emit_conv_then};

// A convolution or product that is not the first operator (a pooling, a norm, an activation before it): the
// steps before it, it and the steps after it are each the table's seed. It decides: no other route takes a
// product of a computed value (each reads its product's operands as the problem's tensors), and its refusal names
// what stopped the chain. Its walks are over smaller graphs (the part before the product, the part from it on),
// so a walk that comes back to it ends, as conv_then's and gemm_then's do.
Claim claim_prologue_then(const MatchContext& c) { return decide_if(product_of_computed_value(c.graph) != nullptr); }
Result<PrologueThenPlan> match_prologue_then_in_table(const OpGraph& g) { return match_prologue_then(g, &second_seed); }
constexpr RouteDef<PrologueThenPlan> kPrologueThenRoute{"prologue_then", match_prologue_then_in_table,
                                                        prologue_then_description, prologue_then_pattern,
                                                        emit_prologue_then};

Claim claim_scan(const MatchContext& c) { return decide_if(c.has(Op::cumsum) || c.has(Op::cumprod)); }

Claim claim_cross_entropy(const MatchContext& c) { return decide_if(c.has(Op::cross_entropy)); }
Claim claim_triplet_loss(const MatchContext& c) { return decide_if(c.has(Op::triplet_margin_loss)); }

// Norms and reductions: a graph that does not end in a reduction is a normalisation or nothing (the
// reduction and loss matchers take only graphs that end in one). A loss function is the loss route's.
Claim claim_norm(const MatchContext& c) {
  return decide_if(c.has_any(is_norm_or_reduction) && !c.has_any(is_loss_function) && !ends_in_reduction(c));
}

// One that ends in a reduction is tried as a reduction first; the loss route below always claims it after.
Claim claim_reduce(const MatchContext& c) {
  return c.has_any(is_norm_or_reduction) && !c.has_any(is_loss_function) && ends_in_reduction(c) ? Claim::attempt
                                                                                                  : Claim::skip;
}

// A loss function, or a reduction that is no plain reduction: the mean or sum of everything of a chain (MSE
// written out). Of everything, a refusal is the loss's; over one dimension the reduction's refusal explains
// better, and stays.
Claim claim_loss(const MatchContext& c) {
  if (c.has_any(is_loss_function)) return Claim::decide;
  if (!c.has_any(is_norm_or_reduction) || !ends_in_reduction(c)) return Claim::skip;
  return reduces_everything(c) ? Claim::decide : Claim::last_resort;
}

// A view of an input or parameter (`p.view(1, -1, 1, 1, 1)`): an operand in the shape it is used at.
bool views_a_leaf(const OpGraph& g) {
  for (int id : reachable(g)) {
    const Node& n = g.node(id);
    if (!is_view_op(n)) continue;
    const Node& viewed = through_views(g, n);
    if (&viewed != &n && (viewed.op == Op::input || viewed.op == Op::param)) return true;
  }
  return false;
}

// Operands of other shapes than the output: an unsqueeze, a view of a leaf, or the shapes the pointwise chain
// refused.
Claim claim_broadcast(const MatchContext& c) {
  return decide_if(c.has(Op::unsqueeze) || views_a_leaf(c.graph) || pointwise_refuses_broadcasting(c.graph));
}

// The routes in the order they are tried. The walk (match_seed, seed.cpp) asks each row's claim: a route
// that claims the graph is matched, and the first plan wins; a refusal is the answer when the claim decides.
// The order is the seed stage's history and every existing seed depends on it (the golden test,
// scripts/seed_golden.py, holds every problem of the repository to it): put a new route where its claim
// cannot take a graph an earlier route already seeds, or say in the commit which seeds it changes.
constexpr Route kRoutes[] = {
    route<kPointwiseRoute>(claim_pointwise),
    route<kRowSoftmaxRoute>(claim_row_softmax),
    route<kPrologueThenRoute>(claim_prologue_then),
    route<kGemmRoute>(claim_gemm),
    route<kGemmEpilogueRoute>(claim_gemm_epilogue),
    route<kGemmThenRoute>(claim_gemm_then),
    route<kPoolRoute>(claim_pool),
    route<kDepthwiseConvRoute>(claim_depthwise_conv),
    route<kSeparableConvRoute>(claim_separable_conv),
    route<kConvRoute>(claim_conv),
    route<kConvFoldRoute>(claim_conv_fold),
    route<kConvStatsRoute>(claim_conv_stats),
    route<kConvEpilogueRoute>(claim_conv_epilogue),
    route<kConvThenRoute>(claim_conv_then),
    route<kScanRoute>(claim_scan),
    route<kCrossEntropyRoute>(claim_cross_entropy),
    route<kTripletLossRoute>(claim_triplet_loss),
    route<kNormRoute>(claim_norm),
    route<kReduceRoute>(claim_reduce),
    route<kLossRoute>(claim_loss),
    route<kBroadcastRoute>(claim_broadcast),
};

}  // namespace

bool MatchContext::has(Op op) const {
  for (Op o : ops)
    if (o == op) return true;
  return false;
}

std::span<const Route> route_table() { return kRoutes; }

MatchContext match_context(const OpGraph& graph) {
  MatchContext c{.graph = graph};
  for (int id : reachable(graph)) {
    const Node& n = graph.node(id);
    if (!is_leaf(n.op.op())) c.ops.push_back(n.op.op());
  }
  if (graph.outputs.size() == 1 && graph.outputs[0].ref) c.output = &graph.node(*graph.outputs[0].ref);
  return c;
}

}  // namespace cutegen::seed
