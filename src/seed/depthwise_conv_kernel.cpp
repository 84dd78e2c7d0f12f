#include "seed/depthwise_conv_kernel.h"

#include <string>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kTemplate =
#include "seed/depthwise_conv_kernel.inc"
    ;

}  // namespace

std::string generate_depthwise_conv_kernel(const DepthwiseConvPlan& plan, const std::string& problem_name) {
  std::string text = kTemplate;
  replace_placeholder(text, "PROBLEM", problem_name);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "DIMS", std::to_string(plan.dims));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  replace_placeholder(text, "WEIGHT_INPUT", std::to_string(plan.weight_input));
  replace_placeholder(text, "BIAS_INPUT", std::to_string(plan.bias_input));
  replace_placeholder(text, "BATCH", std::to_string(plan.batch));
  replace_placeholder(text, "CHANNELS", std::to_string(plan.channels));
  const char* axis[3] = {"D", "H", "W"};
  for (int i = 0; i < 3; ++i) {
    const std::string a = axis[i];
    replace_placeholder(text, "IN_" + a, std::to_string(plan.in[i]));
    replace_placeholder(text, "OUT_" + a, std::to_string(plan.out[i]));
    replace_placeholder(text, "K_" + a, std::to_string(plan.kernel[i]));
    replace_placeholder(text, "S_" + a, std::to_string(plan.stride[i]));
    replace_placeholder(text, "P_" + a, std::to_string(plan.padding[i]));
    replace_placeholder(text, "D_" + a, std::to_string(plan.dilation[i]));
  }
  return text;
}

}  // namespace cutegen::seed
