#include "seed/routes/conv_epilogue/conv_epilogue_route.h"

#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/pointwise_ops.h"

namespace cutegen::seed {
namespace {

bool is_convolution(const Node& n) { return n.op == Op::conv || n.op == Op::conv_transpose; }

// How the epilogue reads tensor t beside the (N, C, spatial...) output `out`, as torch broadcasts it
// (right-aligned): one number, the output's own shape, or one value per channel -- every dimension 1 but the
// one that lines up with C. Error: anything else, or a tensor that is not contiguous float32.
Result<ConvEpilogueOperand::Reads> operand_reads(const OpGraph& g, const Node& t, const std::vector<int64_t>& out) {
  const std::string what = fmt::format("{} {}", t.op == Op::param ? "parameter" : "input", contract_name(g, t));
  if (t.scalar)
    return Error{fmt::format("{} is a Python number passed to forward() (the epilogue seed reads numbers written in "
                             "the module)",
                             what)};
  if (!t.type || t.type->dtype != "float32" || !t.type->contiguous)
    return Error{fmt::format("{} is not a contiguous float32 tensor", what)};
  const auto& s = t.type->shape;
  if (s.size() <= out.size()) {
    if (product(s, 0, s.size()) == 1) return ConvEpilogueOperand::Reads::number;
    if (s == out) return ConvEpilogueOperand::Reads::element;
    const std::size_t lead = out.size() - s.size();  // out's dimensions s does not have
    bool channel = lead <= 1;
    for (std::size_t i = 0; channel && i < s.size(); ++i) channel = s[i] == (lead + i == 1 ? out[1] : 1);
    if (channel) return ConvEpilogueOperand::Reads::channel;
  }
  std::vector<int64_t> per_channel(out.size() - 1, 1);  // (C, 1, 1...)
  per_channel[0] = out.size() > 1 ? out[1] : 0;
  return Error{fmt::format("{} is {}, not one value per output channel ({}), one number or the output's shape ({}): "
                           "the epilogue seed reads nothing else",
                           what, shape_text(s), shape_text(per_channel), shape_text(out))};
}

}  // namespace

Result<ConvPlan> match_conv_epilogue(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node& out = **output;
  // The one convolution the output depends on (counting those behind it: KernelBench's depthwise-separable
  // conv(conv(x)) has two).
  int convolutions = 0;
  for (int id : depends_on(g, out.id)) convolutions += is_convolution(g.node(id));
  if (convolutions != 1)
    return Error{convolutions == 0 ? "no convolution"
                                   : fmt::format("{} convolutions (the epilogue seed fuses one)", convolutions)};
  // The epilogue's operands: what the output reaches without passing through the convolution.
  std::vector<int> leaves;
  int conv_id = -1;
  for (int id : depends_on(g, out.id, is_convolution)) {
    const Node& n = g.node(id);
    if (is_convolution(n)) conv_id = id;
    if (n.op == Op::input || n.op == Op::param) leaves.push_back(id);
  }
  const Node& conv = g.node(conv_id);
  // What is not pointwise first, in execution order: a norm's weight or a reduction's shape would otherwise
  // be the reason, where the op is.
  for (int id : depends_on(g, out.id, is_convolution)) {
    const Node& n = g.node(id);
    if (id == conv_id || n.op == Op::input || n.op == Op::param || n.op == Op::constant) continue;
    if (!n.known || pointwise_arity(n.op.spelling()) == 0)
      return Error{fmt::format("{} after the convolution is not a pointwise op the seed knows (the epilogue seed "
                               "fuses pointwise ops; a norm, reduction or pooling after a convolution has no seed yet)",
                               n.op)};
  }
  auto plan = conv_plan_of(g, conv, /*take_bf16=*/true);
  if (!plan) return plan.error();
  const auto& shape = conv.type->shape;
  const std::string_view dtype = plan->bf16 ? "bfloat16" : "float32";
  if (!out.type || out.type->shape != shape || out.type->dtype != dtype)
    return Error{fmt::format("the output is {} while the convolution is {} {}: the epilogue seed computes one "
                             "value per output element of the convolution",
                             out.type ? fmt::format("{} {}", shape_text(out.type->shape), out.type->dtype)
                                      : "not a tensor",
                             shape_text(shape), dtype)};
  // A bf16 module's epilogue runs in fp32 on the TMA path and the result is rounded once; the kernel reads its
  // operands as fp32, so a bf16 epilogue takes none (activations and the module's numbers only).
  if (auto why = bf16_path_refusal(*plan); !why.empty()) return Error{why};
  if (plan->bf16 && !leaves.empty())
    return Error{fmt::format("a bf16 convolution's epilogue reading {} (the library convolution reads epilogue "
                             "operands as fp32: a bf16 epilogue takes activations and numbers only)",
                             contract_name(g, g.node(leaves.front())))};
  plan->num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size());
  // The graph as people read the epilogue: the convolution is y ("add(relu(y), bias)").
  OpGraph shown = g;
  Node& y = shown.nodes[static_cast<std::size_t>(conv.id)];
  y.op = Op::input;
  y.name = "y";
  y.args.clear();
  std::map<int, std::string> values{{conv.id, "y"}};
  for (int id : leaves) {
    const Node& t = g.node(id);
    auto reads = operand_reads(g, t, shape);
    if (!reads) return reads.error();
    values[id] = fmt::format("e{}", plan->operands.size());
    plan->operands.push_back({.input = t.index, .reads = *reads, .name = contract_name(g, t)});
  }
  auto result = emit_chain(shown, out.id, values, "v", plan->epilogue);
  if (!result) return result.error();
  plan->result = *result;
  plan->pattern = fmt::format("{}, y = {}", text_of(shown, g.outputs[0]), plan->pattern);
  return plan;
}

}  // namespace cutegen::seed
