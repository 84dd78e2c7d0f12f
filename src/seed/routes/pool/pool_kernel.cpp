#include "seed/routes/pool/pool_kernel.h"

#include <string>

#include "seed/store_epilogue.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kPoolTemplate =
#include "seed/pool_kernel.inc"
    ;

}  // namespace

std::string generate_pool_kernel(const PoolPlan& plan, const CommentText& problem) {
  std::string text = kPoolTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "OP", plan.max ? "max pooling" : "average pooling");
  replace_placeholder(text, "DIMS", std::to_string(plan.dims));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  replace_placeholder(text, "IS_MAX", plan.max ? "true" : "false");
  replace_placeholder(text, "PLANES", std::to_string(plan.planes));
  replace_window_placeholders(text, plan.in, plan.out, plan.kernel, plan.stride, plan.padding, plan.dilation);
  replace_placeholder(text, "COUNT_INCLUDE_PAD", plan.count_include_pad ? "true" : "false");
  replace_placeholder(text, "DIVISOR_OVERRIDE", std::to_string(plan.divisor_override));
  fill_store_epilogue(text, plan.epilogue);
  return text;
}

}  // namespace cutegen::seed
