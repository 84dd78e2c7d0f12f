#include "seed/routes/scan/scan_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kScanTemplate =
#include "seed/scan_kernel.inc"
    ;

}  // namespace

std::string generate_scan_kernel(const ScanPlan& plan, const CommentText& problem) {
  const bool sum = plan.op == ScanOp::cumsum;
  std::string text = kScanTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "OP", sum ? "cumsum" : "cumprod");
  replace_placeholder(text, "REVERSE_TEXT", plan.reverse     ? ", from the end of the dimension to its start"
                                            : plan.exclusive ? ", exclusive: position p holds the sum of the positions "
                                                               "before it, position 0 zero"
                                                             : "");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  std::string loads, body;
  if (plan.exclusive) {
    // The scanned value at position p of the dimension is x's at p - 1 (kInner elements before); at 0, the identity.
    loads = fmt::format("  if ((e / kInner) % kExtent == 0) return {};  // exclusive: nothing before position 0\n"
                        "  e -= kInner;\n", sum ? "0.f" : "1.f");
  }
  std::vector<std::string> inputs, dtypes, names;
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    const bool is_bool = plan.dtypes[k] == "bool";
    loads += fmt::format("  const float x{0} = make_tensor(make_gmem_ptr(static_cast<const {1}*>(ops.x[{0}])), flat)(e){2};"
                         "  // {3}\n",
                         k, is_bool ? "bool" : "float", is_bool ? " ? 1.f : 0.f" : "", plan.names[k]);
    inputs.push_back(std::to_string(plan.inputs[k]));
    dtypes.push_back(is_bool ? "CUTEGEN_BOOL" : "CUTEGEN_FLOAT32");
    names.push_back(fmt::format("x{} = {}", k, plan.names[k]));
  }
  for (const auto& s : plan.steps) body += fmt::format("  const float {} = {};  // {}\n", s.value, s.expr, s.what);
  replace_placeholder(text, "NUM_OPERANDS", std::to_string(plan.inputs.size()));
  replace_placeholder(text, "OPERAND_INPUTS", fmt::format("{}", fmt::join(inputs, ", ")));
  replace_placeholder(text, "OPERAND_DTYPES", fmt::format("{}", fmt::join(dtypes, ", ")));
  replace_placeholder(text, "CHAIN_TEXT", plan.steps.empty() ? fmt::format("{}", fmt::join(names, ", "))
                                                             : fmt::format("{} of {}", plan.result, fmt::join(names, ", ")));
  replace_placeholder(text, "LOADS", loads);
  replace_placeholder(text, "BODY", body);
  replace_placeholder(text, "RESULT", plan.result);
  replace_placeholder(text, "OUTER", std::to_string(plan.outer));
  replace_placeholder(text, "EXTENT", std::to_string(plan.extent));
  replace_placeholder(text, "INNER", std::to_string(plan.inner));
  replace_placeholder(text, "REVERSE", plan.reverse ? "true" : "false");
  replace_placeholder(text, "IDENTITY", sum ? "0.0" : "1.0");
  replace_placeholder(text, "COMBINE", sum ? "a + b" : "a * b");
  return text;
}

}  // namespace cutegen::seed
