#pragma once
// The pointwise route (docs/seed.md, "How a problem is recognised"): every value the output depends on is an
// input, a parameter, a number, or a pointwise op of the table (pointwise_ops.h) over values of the output's
// shape and float dtype, so output element i needs element i of each tensor and nothing else. Tried first on
// every graph; its refusal is the answer when no other route claims the graph.
#include "seed/route.h"
#include "seed/routes/pointwise/pointwise_plan.h"

namespace cutegen::seed {

Result<PointwisePlan> match_pointwise(const OpGraph& g);
// The pointwise route refuses the graph because a value has another shape than the output: the broadcast
// route's claim.
bool pointwise_refuses_broadcasting(const OpGraph& g);
// "pointwise chain y = mul(x, sigmoid(x))"
std::string pointwise_description(const PointwisePlan& plan);
std::string pointwise_pattern(const PointwisePlan& plan);
Result<std::string> emit_pointwise(const PointwisePlan& plan, const CommentText& problem);

inline constexpr RouteDef<PointwisePlan> kPointwiseRoute{"pointwise", match_pointwise, pointwise_description,
                                                         pointwise_pattern, emit_pointwise};

}  // namespace cutegen::seed
