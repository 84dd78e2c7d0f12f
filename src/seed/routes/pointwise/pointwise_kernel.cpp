#include "seed/routes/pointwise/pointwise_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>

#include "seed/copy_words_text.h"
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

// The default launch (EW_THREADS, EW_UNROLL) and why, by the chain's cost per element. Both keep a CTA per
// 1024 values; measured on the H200 on KernelBench's 12.9 GB activations, the slower of problem and signed
// inputs (benchmarks/results.md):
//   * cheap chains (compares, selects, FMAs: ReLU): one 16-byte vector per thread, 256 threads — 3.015 ms,
//     against 3.035 for 128 x 2 and 3.164 for four vectors per thread (eager 3.038);
//   * chains with a transcendental call (expm1f, log1pf, tanhf, erff, ...): two vectors per thread, 128
//     threads — ELU 3.015 ms against 3.158 for 256 x 1 (expm1 on half the lanes of signed inputs), Softplus
//     3.002 against 3.293. Each thread then has both loads in flight before its long arithmetic starts, so
//     an SM's DRAM requests do not stall behind the math of the CTAs that already have their data.
struct Launch {
  int threads, unroll;
  const char* why;
};

// The template's register bound (`cutegen:require EW_VEC * EW_UNROLL * operands <= 64`) wins: a chain of
// many half-precision operands keeps one vector per thread.
Launch default_launch(const PointwisePlan& plan, int vec) {
  static const std::regex transcendental(
      R"(\b(exp|expm1|exp2|log|log1p|log2|log10|tanh|sinh|cosh|erf|erfc|sin|cos|tan|pow|atan|asin|acos)f\()");
  const bool two_fit = vec * 2 * static_cast<int>(plan.tensor_inputs.size()) <= 64;
  for (const auto& step : plan.steps)
    if (two_fit && std::regex_search(step.expr, transcendental))
      return {128, 2,
              "The chain calls a transcendental function: two 16-byte vectors per thread, 128\n"
              "// threads, so both loads are in flight before the math starts (on the H200, KernelBench's ELU and\n"
              "// Softplus ran 4-9% faster so than with one vector per thread; benchmarks/results.md)."};
  return {256, 1,
          "The chain is cheap arithmetic: one 16-byte vector per thread, 256 threads (on the\n"
          "// H200, KernelBench 19's ReLU ran 3.015 ms so, 3.164 with four vectors per thread, eager 3.038;\n"
          "// benchmarks/results.md)."};
}

// The descriptor field a host scalar of this dtype carries its value in (kernel contract).
std::string scalar_field(const std::string& dtype) { return dtype == "float64" ? "scalar_f" : "scalar_i"; }

}  // namespace

std::string generate_pointwise_kernel(const PointwisePlan& plan, const CommentText& problem) {
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
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "COPY_WORDS", kCopyWordsText);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "NUM_TENSORS", std::to_string(plan.tensor_inputs.size()));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "DEFAULT_VEC", std::to_string(element.default_vec));
  const Launch launch = default_launch(plan, element.default_vec);
  replace_placeholder(text, "LAUNCH_WHY", launch.why);
  replace_placeholder(text, "DEFAULT_THREADS", std::to_string(launch.threads));
  replace_placeholder(text, "DEFAULT_UNROLL", std::to_string(launch.unroll));
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
