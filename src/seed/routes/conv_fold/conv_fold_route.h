#pragma once
// The conv_fold route (docs/seed.md, "Convolutions"): a convolution, ops affine in its value, then the sum or
// mean over every spatial dimension -- a global average pooling -- computed without the convolution: the
// input planes' box sums combined with the weights (conv_fold_plan.h). What follows the reduction, if anything,
// is the table's next seed, chained as conv_then chains its steps. Takes transposed convolutions of any stride
// and forward ones of stride 1, groups 1, fp32.
#include "seed/route.h"
#include "seed/routes/conv_fold/conv_fold_plan.h"

namespace cutegen::seed {

// The cut points and per-tap segments of one spatial slot: input size `in`, output size `out`, `taps` taps,
// stride, padding and dilation, transposed or forward (stride 1 only). Exposed for the tests.
void fold_intervals(bool transposed, int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t padding,
                    int64_t dilation, std::vector<int64_t>& cuts, std::vector<std::array<int, 2>>& tap_segments);

Result<ConvFoldPlan> match_conv_fold(const OpGraph& g, SecondSeedMatcher second);
std::string conv_fold_description(const ConvFoldPlan& plan);
std::string conv_fold_pattern(const ConvFoldPlan& plan);
Result<std::string> emit_conv_fold(const ConvFoldPlan& plan, const CommentText& problem);

}  // namespace cutegen::seed
