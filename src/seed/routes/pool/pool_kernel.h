#pragma once
// A pooling plan (pool_plan.h) as a candidate .cu file: the window kernel of pool_kernel.cu.in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/pool/pool_plan.h"

namespace cutegen::seed {

std::string generate_pool_kernel(const PoolPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
