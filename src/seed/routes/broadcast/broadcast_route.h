#pragma once
// The broadcast route (docs/seed.md, "Broadcast pointwise chains"): a float32 pointwise chain whose tensor
// operands (inputs, or unsqueezes of inputs) broadcast to the output as torch broadcasts them.
#include "seed/route.h"
#include "seed/routes/broadcast/broadcast_plan.h"

namespace cutegen::seed {

Result<BroadcastPlan> match_broadcast(const OpGraph& g);
// "broadcast pointwise chain y = ..."
std::string broadcast_description(const BroadcastPlan& plan);
std::string broadcast_pattern(const BroadcastPlan& plan);
Result<std::string> emit_broadcast(const BroadcastPlan& plan, const CommentText& problem);

inline constexpr RouteDef<BroadcastPlan> kBroadcastRoute{"broadcast", match_broadcast, broadcast_description, broadcast_pattern, emit_broadcast};

}  // namespace cutegen::seed
