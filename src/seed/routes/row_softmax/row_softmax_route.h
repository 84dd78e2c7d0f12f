#pragma once
// The row-softmax route (docs/seed.md, "Row softmax"): forward() is exactly y = softmax(x, dim=last) (or
// log_softmax) of a contiguous fp32 forward input. The library's ticket or cluster softmax for long rows or
// large tensors (library_softmax.h), the row kernel (row_softmax_kernel.h) otherwise.
#include "seed/route.h"
#include "seed/routes/row_softmax/row_softmax_plan.h"

namespace cutegen::seed {

Result<RowSoftmaxPlan> match_row_softmax(const OpGraph& g);
// "row softmax (the library's ticket softmax) y = softmax(x, dim=-1)"
std::string row_softmax_description(const RowSoftmaxPlan& plan);
// "library ticket softmax: softmax(x, dim=-1)"
std::string row_softmax_pattern(const RowSoftmaxPlan& plan);
Result<std::string> emit_row_softmax(const RowSoftmaxPlan& plan, const CommentText& problem);

inline constexpr RouteDef<RowSoftmaxPlan> kRowSoftmaxRoute{"row_softmax", match_row_softmax, row_softmax_description,
                                                           row_softmax_pattern, emit_row_softmax};

}  // namespace cutegen::seed
