#pragma once
// A cross-entropy plan (cross_entropy_plan.h) as a candidate .cu file (cross_entropy_kernel.cu.in).
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/cross_entropy/cross_entropy_plan.h"

namespace cutegen::seed {

std::string generate_cross_entropy_kernel(const CrossEntropyPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
