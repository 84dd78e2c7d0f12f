#pragma once
// The pooling route (docs/seed.md, "Pooling"): nn.MaxPool1d..3d / nn.AvgPool1d..3d of a contiguous fp32
// forward input (the worker gives the window per dimension).
#include "seed/route.h"
#include "seed/routes/pool/pool_plan.h"

namespace cutegen::seed {

Result<PoolPlan> match_pool(const OpGraph& g);
// "pooling y = ..."
std::string pool_description(const PoolPlan& plan);
std::string pool_pattern(const PoolPlan& plan);
Result<std::string> emit_pool(const PoolPlan& plan, const CommentText& problem);

inline constexpr RouteDef<PoolPlan> kPoolRoute{"pool", match_pool, pool_description, pool_pattern, emit_pool};

}  // namespace cutegen::seed
