#pragma once
// The conv_stats route (docs/seed.md, "Statistics in the convolution's epilogue"): a convolution and its pointwise
// epilogue, maybe a GroupNorm, InstanceNorm or training-mode BatchNorm, then the mean over every spatial dimension
// (and maybe the channels) -- KernelBench level 2's 23 and 27 (with a norm) and 67 (without). The direct
// convolution sums each (image, channel)'s values and squares in its epilogue; small kernels turn those into the
// norm's statistics and the output. y (for 27, 736 MB) is never written, nor read again.
#include "seed/route.h"
#include "seed/routes/conv_stats/conv_stats_plan.h"
#include "seed/routes/then/then_chain.h"

namespace cutegen::seed {

// The chain conv_then would make (its steps found by `second`), taken when it is exactly such a mean, or a norm with
// per-plane statistics and per-channel affine parameters then such a mean, and the convolution runs on the direct
// path. Error: why not.
Result<ConvStatsPlan> match_conv_stats(const OpGraph& g, SecondSeedMatcher second);
std::string conv_stats_description(const ConvStatsPlan& plan);
std::string conv_stats_pattern(const ConvStatsPlan& plan);
Result<std::string> emit_conv_stats(const ConvStatsPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
