#pragma once
// The seed of a reduction over one dimension (sum, mean, max, min, argmax, argmin of one fp32 input): the
// library's reduce_dim itself (library/reduce_dim.cu, compiled in as text) with the operation and
// the dimension set from the graph, not the seed's reduction template (reduce_kernel.h). On an H200,
// KernelBench 47-53 as seeds: 95-96% of the floor on sum/mean, 86-88% on max/min/argmax/argmin, where the
// template reached 82-88% and 53-54% on argmax/argmin (benchmarks/results.md); on the small
// bundled problems 1.0-1.7x eager (benchmarks/results.md).
#include <string>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/routes/reduce/reduce_plan.h"

namespace cutegen::seed {

// "" when the library kernel computes the reduction: one of its six operations over one dimension of the
// contract's only input. Else why not (the template takes it: prod, everything into one value, several inputs).
std::string library_reduce_refusal(const ReducePlan& plan);

// The candidate: a header saying what and why, then the library source with kOp and kDim set from the plan.
// Error when the plan is refused or the library file no longer has the lines the seed sets.
Result<std::string> generate_library_reduce_kernel(const ReducePlan& plan, const CommentText& problem);
// The same from a given library text (the tests' way to show that a changed library file is an Error).
Result<std::string> generate_library_reduce_kernel(const ReducePlan& plan, const CommentText& problem,
                                                   std::string library);

}  // namespace cutegen::seed
