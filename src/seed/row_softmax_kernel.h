#pragma once
// A row-softmax plan (matcher.h) as a candidate .cu file: the library's row-softmax kernel
// (row_softmax_kernel.cu.in, from examples/kernels/softmax_rows.cu), with log_softmax's second pass
// where the plan asks for it.
#include <string>

#include "seed/matcher.h"

namespace cutegen::seed {

std::string generate_row_softmax_kernel(const RowSoftmaxPlan& plan, const std::string& problem_name);

}  // namespace cutegen::seed
