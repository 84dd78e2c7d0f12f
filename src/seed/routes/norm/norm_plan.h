#pragma once
// The normalisation route's plan (norm_route.h): statistics of a group of elements, then every element
// rewritten with them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seed/plan_parts.h"
#include "seed/store_epilogue.h"

namespace cutegen::seed {

//   mean_var: y = (x - mean) * rsqrt(var + eps) [* w[ch]] [+ b[ch]] (LayerNorm, GroupNorm, InstanceNorm,
//             BatchNorm with batch statistics; biased variance as torch's forward uses).
//   scaled:   s = sum or mean over the group of pre(x); d = post(s); y = x / d or x * d (RMS, L1, L2, Frobenius),
//             or y = x - d or x + d (x - mean(x): the centring half of a norm).
enum class NormKind { mean_var, scaled };

// How a scaled norm's element meets its group's value d.
enum class NormCombine { divide, multiply, subtract, add };

// Groups: rows (contiguous runs of `extent`), columns (x viewed as (outer, extent, inner), one group per
// (o, i)), channels (x as (outer, extent, inner) = (N, C, HW), one group per c over N x HW) or all (one
// group: every CTA adds its part into the workspace, then every CTA writes its part).
enum class NormMode { rows, columns, channels, all };
std::string_view norm_mode_name(NormMode mode);  // "rows", ...: as the template's comments spell it

// The kernel that computes it: the library's channel RMSNorm (library/rmsnorm_channels.cu) or the
// route's template (norm_kernel.cu.in).
enum class NormKernel { norm_template, library_channel_rmsnorm };

// Rows of at most this many values get a warp each (the kernel's warp_rows_kernel); longer rows are split over
// CTAs.
constexpr int64_t kNormWarpRowMax = 1024;

struct NormPlan {
  NormKind kind = NormKind::mean_var;
  NormMode mode = NormMode::rows;
  int64_t outer = 1, extent = 1, inner = 1;
  double eps = 0;
  // scaled: the statistic and the two device functions' statements (pointwise table, fp32)
  bool mean = false;                   // s is the mean of pre(x), else its sum
  std::vector<PointwiseStep> pre;      // from x0 to pre_result
  std::string pre_result = "x0";
  std::vector<PointwiseStep> post;     // from s to post_result
  std::string post_result = "s";
  NormCombine combine = NormCombine::divide;  // y = x / d, x * d, x - d or x + d
  // mean_var affine: the channel of element l of group g is (g % ch_groups) * ch_per_group + l / ch_hw
  int weight_input = -1, bias_input = -1;
  int64_t ch_groups = 1, ch_per_group = 1, ch_hw = 1;
  int num_contract_inputs = 0;
  int input = 0;
  // scaled rows/columns: the reduced dimension of the input as traced; -1 otherwise, and for several adjacent
  // dimensions merged into one extent (no library kernel reads those).
  int dim = -1;
  std::string pattern;
  // Decided once by the matcher: the library kernel unless library_rmsnorm_refusal (library_rmsnorm.h) has a
  // reason against the plan, kept in kernel_reason.
  NormKernel kernel = NormKernel::norm_template;
  std::string kernel_reason;
  // A pointwise step after this seed in a chain, folded into its store (store_epilogue.h); none outside chains.
  std::optional<StoreEpilogue> epilogue;
};

}  // namespace cutegen::seed
