#pragma once
// The normalisation route (docs/seed.md, "Normalisations"): a norm module (LayerNorm, GroupNorm,
// InstanceNorm, training-mode BatchNorm, whose weight and bias the worker adds as param nodes) of a forward
// input, or x / f(R(g(x))) with one sum/mean/norm reduction R and pointwise chains g and f (RMS, L1, L2 and
// Frobenius norms). The library's channel RMSNorm where the plan is exactly its computation
// (library_rmsnorm.h), the template (norm_kernel.h) otherwise.
#include "seed/route.h"
#include "seed/routes/norm/norm_plan.h"

namespace cutegen::seed {

Result<NormPlan> match_norm(const OpGraph& g);
// "normalisation (the library's channel RMSNorm) y = ..."
std::string norm_description(const NormPlan& plan);
// "library channel RMSNorm: ..."
std::string norm_pattern(const NormPlan& plan);
Result<std::string> emit_norm(const NormPlan& plan, const CommentText& problem);

inline constexpr RouteDef<NormPlan> kNormRoute{"norm", match_norm, norm_description, norm_pattern, emit_norm};

}  // namespace cutegen::seed
