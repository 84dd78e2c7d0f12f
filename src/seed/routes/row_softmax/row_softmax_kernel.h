#pragma once
// A row-softmax plan (row_softmax_plan.h) as a candidate .cu file: the library's row-softmax kernel
// (row_softmax_kernel.cu.in, from examples/kernels/softmax_rows.cu), with log_softmax's second pass
// where the plan asks for it.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/row_softmax/row_softmax_plan.h"

namespace cutegen::seed {

std::string generate_row_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
