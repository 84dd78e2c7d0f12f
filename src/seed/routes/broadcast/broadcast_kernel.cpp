#include "seed/routes/broadcast/broadcast_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kBroadcastTemplate =
#include "seed/broadcast_kernel.inc"
    ;

}  // namespace

std::string generate_broadcast_kernel(const BroadcastPlan& plan, const CommentText& problem) {
  std::string loads, body;
  std::vector<std::string> inputs, sizes, strides;
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    loads += fmt::format(
        "  const float x{0} = make_tensor(make_gmem_ptr(ops.x[{0}]), make_layout(make_shape(kOperandSize[{0}])))(offset[{0}]);"
        "  // {1}\n",
        k, plan.names[k]);
    inputs.push_back(std::to_string(plan.inputs[k]));
    sizes.push_back(std::to_string(plan.sizes[k]));
    strides.push_back(fmt::format("{{{}}}", fmt::join(plan.strides[k], ", ")));
  }
  for (const auto& s : plan.steps) body += fmt::format("  const float {} = {};  // {}\n", s.value, s.expr, s.what);
  int64_t numel = 1;
  for (int64_t d : plan.shape) numel *= d;
  std::string text = kBroadcastTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "SHAPE_TEXT", fmt::format("{}", fmt::join(plan.shape, ", ")));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "RANK", std::to_string(plan.shape.empty() ? 1 : plan.shape.size()));
  replace_placeholder(text, "SHAPE", plan.shape.empty() ? "1" : fmt::format("{}", fmt::join(plan.shape, ", ")));
  replace_placeholder(text, "NUMEL", std::to_string(numel));
  replace_placeholder(text, "NUM_OPERANDS", std::to_string(plan.inputs.size()));
  replace_placeholder(text, "OPERAND_INPUTS", fmt::format("{}", fmt::join(inputs, ", ")));
  replace_placeholder(text, "OPERAND_SIZES", fmt::format("{}", fmt::join(sizes, ", ")));
  replace_placeholder(text, "OPERAND_STRIDES", fmt::format("{}", fmt::join(strides, ", ")));
  replace_placeholder(text, "LOADS", loads);
  replace_placeholder(text, "BODY", body);
  replace_placeholder(text, "RESULT", plan.result);
  return text;
}

}  // namespace cutegen::seed
