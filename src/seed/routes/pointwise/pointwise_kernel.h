#pragma once
// A pointwise plan (pointwise_plan.h) as a candidate .cu file: the elementwise library kernel
// (pointwise_kernel.cu.in, compiled into the binary) with the chain as its device functor. The result
// is an ordinary candidate -- readable, knobs for the tuner, judged like any other.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/pointwise/pointwise_plan.h"

namespace cutegen::seed {

// `problem` goes into the header comment only.
std::string generate_pointwise_kernel(const PointwisePlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
