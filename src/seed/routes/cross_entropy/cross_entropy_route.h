#pragma once
// The cross_entropy route (docs/seed.md, "Losses"): F.cross_entropy(logits, targets) of a (B, C) fp32 input
// and (B,) int64 class indices, no weight or smoothing, reduction mean or sum.
#include "seed/route.h"
#include "seed/routes/cross_entropy/cross_entropy_plan.h"

namespace cutegen::seed {

Result<CrossEntropyPlan> match_cross_entropy(const OpGraph& g);
// "loss y = ..."
std::string cross_entropy_description(const CrossEntropyPlan& plan);
std::string cross_entropy_pattern(const CrossEntropyPlan& plan);
Result<std::string> emit_cross_entropy(const CrossEntropyPlan& plan, const CommentText& problem);

inline constexpr RouteDef<CrossEntropyPlan> kCrossEntropyRoute{"cross_entropy", match_cross_entropy, cross_entropy_description, cross_entropy_pattern, emit_cross_entropy};

}  // namespace cutegen::seed
