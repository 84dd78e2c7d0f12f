#include "seed/routes/cross_entropy/cross_entropy_kernel.h"

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kCrossEntropyTemplate =
#include "seed/cross_entropy_kernel.inc"
    ;

}  // namespace

std::string generate_cross_entropy_kernel(const CrossEntropyPlan& plan, const CommentText& problem) {
  std::string text = kCrossEntropyTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "REDUCTION", plan.mean ? "mean" : "sum");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "LOGITS_INPUT", std::to_string(plan.logits_input));
  replace_placeholder(text, "TARGETS_INPUT", std::to_string(plan.targets_input));
  replace_placeholder(text, "ROWS", std::to_string(plan.rows));
  replace_placeholder(text, "CLASSES", std::to_string(plan.classes));
  replace_placeholder(text, "IGNORE_INDEX", std::to_string(plan.ignore_index));
  replace_placeholder(text, "MEAN", plan.mean ? "true" : "false");
  return text;
}

}  // namespace cutegen::seed
