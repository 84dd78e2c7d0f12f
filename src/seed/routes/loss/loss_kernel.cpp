#include "seed/routes/loss/loss_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kLossTemplate =
#include "seed/loss_kernel.inc"
    ;

}  // namespace

std::string generate_loss_kernel(const LossPlan& plan, const CommentText& problem) {
  std::string loads, body;
  std::vector<std::string> inputs, sizes, names;
  for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
    const bool broadcast = plan.sizes[k] != plan.numel;
    loads += fmt::format(
        "  const float x{0} = make_tensor(make_gmem_ptr(ops.x[{0}]), make_layout(make_shape(kOperandSize[{0}])))({1});"
        "  // {2}{3}\n",
        k, broadcast ? fmt::format("e % kOperandSize[{}]", k) : "e", plan.names[k],
        broadcast ? ", broadcast" : "");
    inputs.push_back(std::to_string(plan.inputs[k]));
    sizes.push_back(std::to_string(plan.sizes[k]));
    names.push_back(fmt::format("x{} = {}", k, plan.names[k]));
  }
  for (const auto& s : plan.steps) body += fmt::format("  const float {} = {};  // {}\n", s.value, s.expr, s.what);
  const std::string scale_text = plan.reduction == LossReduction::sum    ? "1"
                                 : plan.reduction == LossReduction::mean ? "1/numel"
                                                            : "1/batch (batchmean)";
  std::string text = kLossTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "SCALE_TEXT", scale_text);
  replace_placeholder(text, "NUMEL", std::to_string(plan.numel));
  replace_placeholder(text, "OPERAND_NAMES", fmt::format("{}", fmt::join(names, ", ")));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "SCALE", fmt::format("{:.17g}", plan.scale));
  replace_placeholder(text, "NUM_OPERANDS", std::to_string(plan.inputs.size()));
  replace_placeholder(text, "OPERAND_INPUTS", fmt::format("{}", fmt::join(inputs, ", ")));
  replace_placeholder(text, "OPERAND_SIZES", fmt::format("{}", fmt::join(sizes, ", ")));
  replace_placeholder(text, "LOADS", loads);
  replace_placeholder(text, "BODY", body);
  replace_placeholder(text, "RESULT", plan.result);
  return text;
}

}  // namespace cutegen::seed
