#pragma once
// A broadcast plan (broadcast_plan.h) as a candidate .cu file: the per-element kernel of broadcast_kernel.cu.in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/broadcast/broadcast_plan.h"

namespace cutegen::seed {

std::string generate_broadcast_kernel(const BroadcastPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
