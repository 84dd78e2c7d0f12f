#include "seed/routes/norm/norm_kernel.h"

#include <fmt/format.h>

#include "seed/store_epilogue.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kNormTemplate =
#include "seed/norm_kernel.inc"
    ;

std::string statements(const std::vector<PointwiseStep>& steps) {
  std::string body;
  for (const auto& s : steps) body += fmt::format("  const float {} = {};  // {}\n", s.value, s.expr, s.what);
  return body;
}

std::string mode_text(const NormPlan& p) {
  if (p.mode == NormMode::rows && p.extent <= kNormWarpRowMax)
    return fmt::format("{} contiguous runs of {} values, a warp per run (warp_rows_kernel).", p.outer * p.inner,
                       p.extent);
  if (p.mode == NormMode::rows)
    return fmt::format("{} contiguous runs of {} values, each split over enough CTAs to fill the GPU.",
                       p.outer * p.inner, p.extent);
  if (p.mode == NormMode::columns)
    return fmt::format("x as (outer, extent, inner) = ({}, {}, {}); a group is the {} values x[o, :, i], a thread\n"
                       "// per group, so a warp reads consecutive floats at every step.",
                       p.outer, p.extent, p.inner, p.extent);
  if (p.mode == NormMode::channels)
    return fmt::format("x as (N, C, HW) = ({}, {}, {}); a group is channel c over N x HW, split over CTAs.",
                       p.outer, p.extent, p.inner);
  return fmt::format("the whole tensor ({} values) is one group, split over CTAs.", p.extent);
}

// How a scaled norm's element meets d, as a constant of the kernel and the expression apply() returns. Divide and
// multiply keep the text they had before subtract and add were taken, so those seeds are unchanged.
std::string combine_constant(const NormPlan& p) {
  if (p.combine == NormCombine::divide || p.combine == NormCombine::multiply)
    return fmt::format("constexpr bool kDivide = {};  // scaled: y = x / d, else x * d",
                       p.combine == NormCombine::divide ? "true" : "false");
  return fmt::format("constexpr bool kSubtract = {};  // scaled: y = x - d, else x + d",
                     p.combine == NormCombine::subtract ? "true" : "false");
}

std::string scaled_apply(const NormPlan& p) {
  if (p.combine == NormCombine::divide || p.combine == NormCombine::multiply)
    return "kDivide ? x / c.scale : x * c.scale";
  return "kSubtract ? x - c.scale : x + c.scale";
}

std::string combine_symbol(NormCombine c) {
  switch (c) {
    case NormCombine::divide: return "/";
    case NormCombine::multiply: return "*";
    case NormCombine::subtract: return "-";
    case NormCombine::add: return "+";
  }
  return "";
}

std::string mode_enum(NormMode mode) {
  if (mode == NormMode::rows) return "kRows";
  if (mode == NormMode::columns) return "kColumns";
  if (mode == NormMode::channels) return "kChannels";
  return "kAll";
}

}  // namespace

std::string generate_norm_kernel(const NormPlan& plan, const CommentText& problem) {
  const bool mean_var = plan.kind == NormKind::mean_var;
  std::string kind_text =
      mean_var ? std::string("Mean and biased variance of each group: y = (x - mean) * rsqrt(var + eps)") +
                     (plan.weight_input >= 0 ? " * weight[ch]" : "") + (plan.bias_input >= 0 ? " + bias[ch]" : "") +
                     "."
               : fmt::format("s = the {} of pre(x) over each group, d = post(s), y = x {} d.", plan.mean ? "mean" : "sum",
                             combine_symbol(plan.combine));
  std::string text = kNormTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "KIND_TEXT", kind_text);
  replace_placeholder(text, "MODE_TEXT", mode_text(plan));
  replace_placeholder(text, "MODE_ENUM", mode_enum(plan.mode));
  replace_placeholder(text, "MODE", std::string(norm_mode_name(plan.mode)));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  replace_placeholder(text, "OUTER", std::to_string(plan.outer));
  replace_placeholder(text, "EXTENT", std::to_string(plan.extent));
  replace_placeholder(text, "INNER", std::to_string(plan.inner));
  replace_placeholder(text, "WARP_ROW_MAX", std::to_string(kNormWarpRowMax));
  replace_placeholder(text, "MEAN_VAR", mean_var ? "true" : "false");
  replace_placeholder(text, "EPS", fmt::format("{}", plan.eps));
  replace_placeholder(text, "MEAN", plan.mean ? "true" : "false");
  replace_placeholder(text, "COMBINE_CONSTANT", combine_constant(plan));
  replace_placeholder(text, "SCALED_APPLY", scaled_apply(plan));
  replace_placeholder(text, "WEIGHT_INPUT", std::to_string(plan.weight_input));
  replace_placeholder(text, "BIAS_INPUT", std::to_string(plan.bias_input));
  replace_placeholder(text, "CH_GROUPS", std::to_string(plan.ch_groups));
  replace_placeholder(text, "CH_PER_GROUP", std::to_string(plan.ch_per_group));
  replace_placeholder(text, "CH_HW", std::to_string(plan.ch_hw));
  replace_placeholder(text, "PRE_BODY", statements(plan.pre));
  replace_placeholder(text, "PRE_RESULT", plan.pre_result);
  replace_placeholder(text, "POST_BODY", statements(plan.post));
  replace_placeholder(text, "POST_RESULT", plan.post_result);
  fill_store_epilogue(text, plan.epilogue);
  return text;
}

}  // namespace cutegen::seed
