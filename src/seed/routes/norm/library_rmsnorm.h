#pragma once
// The seed of an RMSNorm over the channels of an (N, C, *) tensor, x / sqrt(mean(x^2, dim=1) + eps): the
// library's channel RMSNorm itself (library/rmsnorm_channels.cu, compiled in as text) with eps set
// from the graph, not the seed's generic norm kernel (norm_kernel.h). On an H200, KernelBench 36
// (112 x 64 x 512 x 512) judged 3.93 ms with the library kernel (90% of the floor) against 6.44 ms with
// the generic one (benchmarks/results.md).
#include <string>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/routes/norm/norm_plan.h"

namespace cutegen::seed {

// The most channels the library kernel keeps in registers (its kMaxChannels): the path that was measured.
inline constexpr int64_t kLibraryRmsNormMaxChannels = 64;

// "" when the norm is exactly the library kernel's: a scaled norm dividing by sqrt(mean(x * x) + eps) over
// dimension 1 with positions after it (columns), at most kLibraryRmsNormMaxChannels channels, the contract's
// only input. Else why not (the generic norm kernel takes it).
std::string library_rmsnorm_refusal(const NormPlan& plan);

// The candidate: a header saying what and why, then the library source with kEps set from the plan. Error when
// the plan is refused or the library file no longer has the line the seed sets.
Result<std::string> generate_library_rmsnorm_kernel(const NormPlan& plan, const CommentText& problem);
// The same from a given library text (the tests' way to show that a changed library file is an Error).
Result<std::string> generate_library_rmsnorm_kernel(const NormPlan& plan, const CommentText& problem,
                                                    std::string library);

}  // namespace cutegen::seed
