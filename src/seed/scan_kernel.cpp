#include "seed/scan_kernel.h"

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kTemplate =
#include "seed/scan_kernel.inc"
    ;

}  // namespace

std::string generate_scan_kernel(const ScanPlan& plan, const std::string& problem_name) {
  const bool sum = plan.op == "cumsum";
  std::string text = kTemplate;
  replace_placeholder(text, "PROBLEM", problem_name);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "OP", plan.op);
  replace_placeholder(text, "REVERSE_TEXT", plan.reverse ? ", from the end of the dimension to its start" : "");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  replace_placeholder(text, "OUTER", std::to_string(plan.outer));
  replace_placeholder(text, "EXTENT", std::to_string(plan.extent));
  replace_placeholder(text, "INNER", std::to_string(plan.inner));
  replace_placeholder(text, "REVERSE", plan.reverse ? "true" : "false");
  replace_placeholder(text, "IDENTITY", sum ? "0.0" : "1.0");
  replace_placeholder(text, "COMBINE", sum ? "a + b" : "a * b");
  return text;
}

}  // namespace cutegen::seed
