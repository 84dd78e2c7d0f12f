#pragma once
// A reduction plan (reduce_plan.h) as a candidate .cu file: the reduce-over-one-dimension kernel
// (reduce_kernel.cu.in) with the op's identity, combine and finish written in.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/reduce/reduce_plan.h"

namespace cutegen::seed {

std::string generate_reduce_kernel(const ReducePlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
