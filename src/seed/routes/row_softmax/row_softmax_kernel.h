#pragma once
// A row-softmax plan (row_softmax_plan.h) as a candidate .cu file: the library's row-softmax kernel
// (row_softmax_kernel.cu.in, from attacks/honest/softmax_rows.cu), with log_softmax's second pass
// where the plan asks for it.
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/row_softmax/row_softmax_plan.h"

namespace cutegen::seed {

std::string generate_row_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem);
// A softmax over a dimension that is not the last (strided_softmax_kernel.cu.in): a thread per column.
std::string generate_strided_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
