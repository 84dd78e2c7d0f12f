#pragma once
// The reduction route (docs/seed.md, "Reductions over one dimension"): sum, mean, prod, max/min/amax/amin or
// argmax/argmin of a contiguous fp32 forward input over one dimension (or, but for sum and mean, over
// everything), in the torch, Tensor and torch.max(x, dim)[i] spellings. The library's reduce_dim where it
// computes the op (library_reduce.h), the template (reduce_kernel.h) otherwise.
#include "seed/route.h"
#include "seed/routes/reduce/reduce_plan.h"

namespace cutegen::seed {

Result<ReducePlan> match_reduce(const OpGraph& g);
// "reduction (the library's reduce_dim) y = sum(x, dim=1)"
std::string reduce_description(const ReducePlan& plan);
// "library reduce_dim: sum(x, dim=1)"
std::string reduce_pattern(const ReducePlan& plan);
Result<std::string> emit_reduce(const ReducePlan& plan, const CommentText& problem);

inline constexpr RouteDef<ReducePlan> kReduceRoute{"reduce", match_reduce, reduce_description, reduce_pattern,
                                                   emit_reduce};

}  // namespace cutegen::seed
