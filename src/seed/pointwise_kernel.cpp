#include "seed/pointwise_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kPointwiseTemplate =
#include "seed/pointwise_kernel.inc"
    ;

struct ElementType {
  const char* cpp;
  const char* dtype;
  int default_vec;  // one 16-byte access per vector
};

ElementType element_type(const std::string& dtype) {
  if (dtype == "float16") return {"cute::half_t", "CUTEGEN_FLOAT16", 8};
  if (dtype == "bfloat16") return {"cute::bfloat16_t", "CUTEGEN_BFLOAT16", 8};
  return {"float", "CUTEGEN_FLOAT32", 4};
}

// The descriptor field a host scalar of this dtype carries its value in (kernel contract).
std::string scalar_field(const std::string& dtype) { return dtype == "float64" ? "scalar_f" : "scalar_i"; }

}  // namespace

std::string generate_pointwise_kernel(const PointwisePlan& plan, const std::string& problem_name) {
  const ElementType element = element_type(plan.dtype);
  std::string members, reads, params, body, names;
  for (const auto& s : plan.scalars) {
    members += fmt::format("  float {} = 0.f;  // forward argument {} ({}), read on every call\n", s.member, s.name,
                           s.dtype);
    reads += fmt::format(
        "  if (!inputs[{0}].is_host_scalar) return CUTEGEN_ERROR_BAD_ARGUMENTS;\n"
        "  op.{1} = static_cast<float>(inputs[{0}].{2});\n",
        s.index, s.member, scalar_field(s.dtype));
  }
  std::vector<std::string> operand_params, inputs, tensor_names;
  for (std::size_t k = 0; k < plan.tensor_inputs.size(); ++k) {
    operand_params.push_back(fmt::format("float x{}", k));
    inputs.push_back(std::to_string(plan.tensor_inputs[k]));
    tensor_names.push_back(fmt::format("x{} = {} (input {})", k, plan.tensor_names[k], plan.tensor_inputs[k]));
  }
  for (const auto& step : plan.steps)
    body += fmt::format("    const float {} = {};  // {}\n", step.value, step.expr, step.what);

  std::string text = kPointwiseTemplate;
  replace_placeholder(text, "PROBLEM", problem_name);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "NUM_TENSORS", std::to_string(plan.tensor_inputs.size()));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "DEFAULT_VEC", std::to_string(element.default_vec));
  replace_placeholder(text, "ELEMENT", element.cpp);
  replace_placeholder(text, "DTYPE", element.dtype);
  replace_placeholder(text, "TENSOR_NAMES", fmt::format("{}", fmt::join(tensor_names, ", ")));
  replace_placeholder(text, "TENSOR_INPUTS", fmt::format("{}", fmt::join(inputs, ", ")));
  replace_placeholder(text, "SCALAR_MEMBERS", members);
  replace_placeholder(text, "OPERAND_PARAMS", fmt::format("{}", fmt::join(operand_params, ", ")));
  replace_placeholder(text, "BODY", body);
  replace_placeholder(text, "RESULT", plan.result);
  replace_placeholder(text, "SCALAR_READS", reads);
  return text;
}

}  // namespace cutegen::seed
