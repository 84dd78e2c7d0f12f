#include "seed/routes/conv_stats/conv_stats_route.h"

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/library_text.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_then/conv_then_route.h"
#include "seed/routes/norm/norm_plan.h"
#include "seed/routes/reduce/reduce_plan.h"
#include "seed/template_text.h"
#include "seed/workspace_cap.h"

namespace cutegen::seed {
namespace {

constexpr const char* kConvStatsTemplate =
#include "seed/conv_stats_kernel.inc"
    ;
constexpr const char* kConvStatsSeedFile = "src/seed/routes/conv_stats/conv_stats_route.cpp";

template <class Plan>
const Plan* step_plan(const ThenStep& s) {
  const auto* typed = dynamic_cast<const TypedPlan<Plan>*>(s.seed.get());
  return typed ? &typed->plan() : nullptr;
}

// The norm's kind from its plan, or why it is none this route takes: per (image, group of whole channel planes) --
// GroupNorm, InstanceNorm -- or per channel over the batch (BatchNorm), with per-channel affine parameters.
Status read_norm(const NormPlan& n, int64_t images, int64_t channels, int64_t positions, ConvStatsPlan& plan) {
  if (n.kind != NormKind::mean_var) return Error{"the norm is no mean-and-variance norm"};
  if (n.epilogue) return Error{"a pointwise step follows the norm (the mean of its values is not the norm's)"};
  if (n.input != 0) return Error{"the norm does not read the convolution's result"};
  if (n.mode == NormMode::channels && n.outer == images && n.extent == channels && n.inner == positions) {
    plan.batch_norm = true;
  } else if (n.mode == NormMode::rows && n.ch_hw == positions && n.ch_groups * n.ch_per_group == channels &&
             n.outer == images * n.ch_groups && n.extent == n.ch_per_group * positions && n.inner == 1) {
    plan.norm_groups = n.ch_per_group == 1 ? 0 : n.ch_groups;
  } else {
    return Error{"the norm's statistics are not per (image, group of channels) or per channel over the batch"};
  }
  plan.eps = n.eps;
  plan.norm_weight = n.weight_input;
  plan.norm_bias = n.bias_input;
  plan.norm_pattern = n.pattern;
  return ok_status();
}

Status read_mean(const ReducePlan& r, int64_t images, int64_t channels, int64_t positions, ConvStatsPlan& plan) {
  if (r.op != ReduceOp::mean || r.out_dtype != "float32") return Error{"the reduction after the norm is no mean"};
  if (r.epilogue) return Error{"a pointwise step follows the mean"};
  if (r.inner != 1) return Error{"the mean is not over the trailing dimensions"};
  if (r.extent == positions && r.outer == images * channels) {
    plan.over_channels = false;
  } else if (r.extent == channels * positions && r.outer == images) {
    plan.over_channels = true;
  } else {
    return Error{"the mean is not over every spatial dimension (and the channels)"};
  }
  plan.mean_pattern = r.pattern;
  return ok_status();
}

int64_t stats_bytes(const ConvStatsPlan& p) {
  return (2 * 8 * p.y_shape.at(0) * p.y_shape.at(1) + 255) / 256 * 256;
}

std::string slots_text(const int64_t (&v)[3]) { return fmt::format("{}, {}, {}", v[0], v[1], v[2]); }

// "mean(...) of group_norm(...)", or the mean alone
std::string after_text(const ConvStatsPlan& plan) {
  return plan.has_norm ? fmt::format("{} of {}", plan.mean_pattern, plan.norm_pattern) : plan.mean_pattern;
}

}  // namespace

Result<ConvStatsPlan> match_conv_stats(const OpGraph& g, SecondSeedMatcher second) {
  auto chain = match_conv_then(g, second);
  if (!chain) return Error{fmt::format("as a chain: {}", chain.error().message)};
  if (chain->pooled) return Error{"an average pooling folds into the convolution instead"};
  if (chain->steps.empty() || chain->steps.size() > 2)
    return Error{"the convolution is not followed by a mean, or by a norm and a mean"};
  for (const ThenStep& s : chain->steps)
    if (!s.extra_reads.empty()) return Error{"a step after the convolution reads an earlier value again"};
  const bool has_norm = chain->steps.size() == 2;
  const NormPlan* norm = has_norm ? step_plan<NormPlan>(chain->steps[0]) : nullptr;
  const ReducePlan* mean = step_plan<ReducePlan>(chain->steps.back());
  if (!has_norm && !mean)
    return Error{fmt::format("the step after the convolution is {}, not a mean", chain->steps[0].seed->route())};
  if (has_norm && (!norm || !mean))
    return Error{fmt::format("the steps after the convolution are {} and {}, not a norm and a mean",
                             chain->steps[0].seed->route(), chain->steps[1].seed->route())};
  ConvStatsPlan plan;
  plan.has_norm = has_norm;
  plan.y_shape = chain->head_shape;
  if (plan.y_shape.size() < 3) return Error{"the convolution's result has no spatial dimension"};
  const int64_t images = plan.y_shape[0], channels = plan.y_shape[1],
                positions = product(plan.y_shape, 2, plan.y_shape.size());
  if (norm)
    if (auto s = read_norm(*norm, images, channels, positions, plan); !s) return s.error();
  if (auto s = read_mean(*mean, images, channels, positions, plan); !s) return s.error();
  plan.conv = chain->head;
  // A chain whose stored results pass the judge's cap runs in passes of a few images, its parts planned for one
  // pass (the checks above hold at any batch); this one stores no result, so it takes the whole batch at once.
  if (chain->batch) {
    plan.y_shape[0] = plan.conv.output_shape.at(0) = plan.conv.input_shape.at(0) = chain->batch;
  }
  plan.conv_pattern = chain->head_pattern;
  plan.num_contract_inputs = chain->num_contract_inputs;
  plan.output_shape = chain->output_shape;
  // The statistics are the only result: the convolution's path is chosen for what the cap leaves beside them.
  choose_conv_path(plan.conv, judge_workspace_cap(g) - stats_bytes(plan));
  if (plan.conv.path != ConvPlan::Path::direct) {
    std::string why = direct_path_refusal(plan.conv);
    if (why.empty()) why = plan.conv.path_reason;  // 8 channels a group on a layer the TMA path does not take
    return Error{fmt::format("the convolution runs on the {} path (statistics are gathered on the direct path: {})",
                             conv_path_name(plan.conv.path), why)};
  }
  return plan;
}

std::string conv_stats_description(const ConvStatsPlan& plan) {
  return fmt::format("convolution with each (image, channel)'s sum and sum of squares gathered in its epilogue, "
                     "then {} from them (the convolution's result is never stored): y = {}",
                     after_text(plan), plan.conv_pattern);
}

std::string conv_stats_pattern(const ConvStatsPlan& plan) {
  return fmt::format("{} gathering statistics, then {} from them; y = {}", conv_kernel_name(plan.conv),
                     after_text(plan), plan.conv_pattern);
}

Result<std::string> emit_conv_stats(const ConvStatsPlan& plan, const CommentText& problem) {
  auto conv = conv_library_text(plan.conv);
  if (!conv) return conv.error();
  if (auto s = replace_library_lines(
          *conv,
          {{"#define CIG_STATS 0", "#define CIG_STATS 1  // set by the seed: sums and squares, not y (conv_stats)"},
           {"extern \"C\" size_t cutegen_workspace_bytes(", "static size_t conv_workspace_bytes("},
           {"extern \"C\" int cutegen_forward_ws(", "static int conv_forward_ws("}},
          "library/conv_implicit_gemm.cu", kConvStatsSeedFile);
      !s)
    return s.error();
  std::string t = kConvStatsTemplate;
  replace_placeholder(t, "PROBLEM", problem.str());
  replace_placeholder(t, "NORM_PATTERN", plan.has_norm ? plan.norm_pattern : "y (no norm)");
  replace_placeholder(t, "HAS_NORM", plan.has_norm ? "true" : "false");
  replace_placeholder(t, "MEAN_PATTERN", plan.mean_pattern);
  replace_placeholder(t, "CONV_PATTERN", plan.conv_pattern);
  replace_placeholder(t, "Y_SHAPE", shape_text(plan.y_shape));
  replace_placeholder(t, "NUM_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(t, "X_INPUT", std::to_string(plan.conv.x_input));
  replace_placeholder(t, "W_INPUT", std::to_string(plan.conv.weight_input));
  replace_placeholder(t, "NORM_WEIGHT", std::to_string(plan.norm_weight));
  replace_placeholder(t, "NORM_BIAS", std::to_string(plan.norm_bias));
  replace_placeholder(t, "BATCH_NORM", plan.batch_norm ? "true" : "false");
  replace_placeholder(t, "NORM_GROUPS", std::to_string(plan.norm_groups));
  replace_placeholder(t, "EPS", fmt::format("{:.17g}", plan.eps));
  replace_placeholder(t, "OVER_CHANNELS", plan.over_channels ? "true" : "false");
  replace_placeholder(t, "OUTPUT_PADDING", slots_text(plan.conv.output_padding));
  replace_placeholder(t, "LIBRARY", *conv);  // last: nothing else is looked for in the library's text
  return t;
}

}  // namespace cutegen::seed
