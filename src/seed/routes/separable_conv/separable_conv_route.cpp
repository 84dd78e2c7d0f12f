#include "seed/routes/separable_conv/separable_conv_route.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/library_text.h"
#include "seed/plan_parts.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/depthwise_conv/depthwise_conv_kernel.h"
#include "seed/routes/depthwise_conv/depthwise_conv_route.h"
#include "seed/template_text.h"
#include "seed/workspace_cap.h"

namespace cutegen::seed {
namespace {

constexpr const char* kSeparableTemplate =
#include "seed/separable_conv_kernel.inc"
    ;
constexpr const char* kSeedFile = "src/seed/routes/separable_conv/separable_conv_route.cpp";

bool is_convolution(const Node& n) { return n.op == Op::conv || n.op == Op::conv_transpose; }

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

}  // namespace

Result<SeparableConvPlan> match_separable_conv(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node& second = **output;
  if (!is_convolution(second) || second.args.empty() || !second.args[0].ref ||
      !is_convolution(g.node(*second.args[0].ref)))
    return Error{fmt::format("the output is {}, not a convolution of a convolution", second.op)};
  const Node& first = g.node(*second.args[0].ref);
  SeparableConvPlan plan;
  // The first convolution as the depthwise route sees a graph that returns it.
  OpGraph inner = g;
  inner.outputs = {Operand{.ref = first.id}};
  auto depthwise = match_depthwise_conv(inner);
  if (!depthwise)
    return Error{fmt::format("a convolution of a convolution whose first is not a depthwise one of an input ({})",
                             depthwise.error().message)};
  plan.depthwise = *depthwise;
  // The second as the conv route sees a convolution of an input y: the intermediate.
  OpGraph outer = g;
  Node& y = outer.nodes[static_cast<std::size_t>(first.id)];
  y.op = Op::input;
  y.name = "y";
  y.args.clear();
  y.params.clear();
  auto library = conv_plan_of(outer, second);
  if (!library) return Error{fmt::format("the second convolution of a depthwise one: {}", library.error().message)};
  plan.second = *library;
  if (!first.type) return Error{"the depthwise convolution has no tensor type in the trace"};
  plan.intermediate_bytes = round_up(product(first.type->shape, 0, first.type->shape.size()) * 4, 256);
  constexpr int64_t kLibraryShare = int64_t{64} << 20;  // the library convolution's tap table and split weights
  if (plan.intermediate_bytes > kWorkspaceCeiling - kLibraryShare)
    return Error{fmt::format("the depthwise convolution's output ({} bytes) does not fit the judge's workspace cap "
                             "({} bytes) with the library convolution's tables",
                             plan.intermediate_bytes, kWorkspaceCeiling)};
  choose_conv_path(plan.second, judge_workspace_cap(g) - plan.intermediate_bytes);  // the intermediate comes first
  plan.pattern = fmt::format("{}, y = {}", plan.second.pattern, plan.depthwise.pattern);
  return plan;
}

std::string separable_conv_description(const SeparableConvPlan& plan) {
  return "depthwise-separable convolution out = " + plan.pattern;
}

std::string separable_conv_pattern(const SeparableConvPlan& plan) {
  return "depthwise + " + conv_kernel_name(plan.second) + ": " + plan.pattern;
}

Result<std::string> emit_separable_conv(const SeparableConvPlan& plan, const CommentText& problem) {
  std::string depthwise = generate_depthwise_conv_kernel(plan.depthwise, problem);
  // The depthwise seed's entry point, made the first step's function (the template's line, exactly).
  if (auto s = replace_library_line(
          depthwise,
          "extern \"C\" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* "
          "outputs,",
          "static int depthwise_forward(const cutegen_tensor* inputs, int32_t num_inputs, "
          "const cutegen_tensor* outputs,",
          "src/seed/routes/depthwise_conv/depthwise_conv_kernel.cu.in", kSeedFile);
      !s)
    return s.error();
  auto library = conv_library_text(plan.second);
  if (!library) return library.error();
  if (auto s = replace_library_lines(
          *library,
          {{"extern \"C\" size_t cutegen_workspace_bytes(", "static size_t conv_workspace_bytes("},
           {"extern \"C\" int cutegen_forward_ws(", "static int conv_forward_ws("}},
          "library/conv_implicit_gemm.cu", kSeedFile);
      !s)
    return s.error();
  const DepthwiseConvPlan& dw = plan.depthwise;
  std::vector<int64_t> dims{dw.batch, dw.channels};
  for (int i = 3 - dw.dims; i < 3; ++i) dims.push_back(dw.out[i]);
  std::string text = kSeparableTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "INTERMEDIATE_SHAPE", fmt::format("{}", fmt::join(dims, " x ")));
  replace_placeholder(text, "INTERMEDIATE_BYTES", std::to_string(plan.intermediate_bytes));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(dw.num_contract_inputs));
  replace_placeholder(text, "SECOND_WEIGHT_INPUT", std::to_string(plan.second.weight_input));
  replace_placeholder(text, "SECOND_BIAS_INPUT", std::to_string(plan.second.bias_input));
  replace_placeholder(text, "RANK", std::to_string(dims.size()));
  replace_placeholder(text, "INTERMEDIATE_DIMS", fmt::format("{}", fmt::join(dims, ", ")));
  // The two kernels last: their text is not searched for placeholders.
  replace_placeholder(text, "DEPTHWISE_KERNEL", depthwise);
  replace_placeholder(text, "LIBRARY_CONVOLUTION", *library);
  return text;
}

}  // namespace cutegen::seed
