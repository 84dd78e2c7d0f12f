#include "seed/routes/depthwise_conv/depthwise_conv_kernel.h"

#include <string>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kDepthwiseConvTemplate =
#include "seed/depthwise_conv_kernel.inc"
    ;

}  // namespace

std::string generate_depthwise_conv_kernel(const DepthwiseConvPlan& plan, const CommentText& problem) {
  std::string text = kDepthwiseConvTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "DIMS", std::to_string(plan.dims));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  replace_placeholder(text, "WEIGHT_INPUT", std::to_string(plan.weight_input));
  replace_placeholder(text, "BIAS_INPUT", std::to_string(plan.bias_input));
  replace_placeholder(text, "BATCH", std::to_string(plan.batch));
  replace_placeholder(text, "CHANNELS", std::to_string(plan.channels));
  replace_window_placeholders(text, plan.in, plan.out, plan.kernel, plan.stride, plan.padding, plan.dilation);
  return text;
}

}  // namespace cutegen::seed
