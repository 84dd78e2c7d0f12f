#pragma once
// A normalisation plan (plans.h) as a candidate .cu file: the group-statistics kernel
// (norm_kernel.cu.in) with the mode, the affine parameters and the pre/post device functions written in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/norm/norm_plan.h"

namespace cutegen::seed {

std::string generate_norm_kernel(const NormPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
