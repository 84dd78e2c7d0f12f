#include "seed/routes/conv_then/conv_then_route.h"

#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/library_text.h"
#include "seed/plan_parts.h"
#include "seed/pointwise_ops.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/routes/then/batch_passes.h"
#include "seed/routes/then/chain_values.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kConvThenHeader =
#include "seed/conv_then_kernel.inc"
    ;
constexpr const char* kConvThenSeedFile = "src/seed/routes/conv_then/conv_then_route.cpp";

// The steps after the head, whose result is node `cut` of `g`: the rest of the graph with it as forward input 0 --
// and, where the rest reads forward input 0 too, that input after the problem's forward inputs (rest_after_head).
Status add_steps(const OpGraph& g, int cut, SecondSeedMatcher second, ConvThenPlan& plan) {
  auto steps = chain_steps_after(g, cut, cut, second, "convolution", /*head_file_scope=*/true);
  if (!steps) return steps.error();
  plan.steps = std::move(*steps);
  plan.num_forward_inputs = g.num_inputs;
  return ok_status();
}

// The chain for the graph as traced, its convolution's path not yet chosen for the chain's workspace.
Result<ConvThenPlan> plan_conv_then(const OpGraph& g, SecondSeedMatcher second) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node& out = **output;
  const std::vector<int> reach = reachable(g);
  const Node* only = only_convolution(g, reach);
  if (!only) {  // conv_epilogue's reason says how many
    auto epilogue = match_conv_epilogue(g);
    return epilogue ? Error{"not one convolution"} : epilogue.error();
  }
  const Node& conv = *only;
  if (!conv.type) return Error{"the convolution has no tensor type in the trace"};
  const std::set<int> head = pointwise_after(g, conv, reach);
  // An output inside the head is a convolution with a pointwise epilogue: conv_epilogue's, whose refusal says why.
  if (head.count(out.id)) {
    auto epilogue = match_conv_epilogue(g);
    return epilogue ? Error{"a convolution with a pointwise epilogue (the conv_epilogue route's)"} : epilogue.error();
  }
  std::set<int> read_after;
  for (int id : reach)
    if (!head.count(id))
      for (const Operand& a : g.node(id).args)
        if (a.ref && head.count(*a.ref)) read_after.insert(*a.ref);
  if (read_after.size() != 1)
    return Error{fmt::format("the ops after the convolution's pointwise epilogue read {} of its values (a second "
                             "seed reads one)",
                             read_after.size())};
  const int split = *read_after.begin();
  const Node& y = g.node(split);
  ConvThenPlan plan;
  OpGraph head_graph = g;
  head_graph.outputs = {Operand{.ref = split}};
  auto head_plan = match_conv_epilogue(head_graph);
  if (!head_plan) return Error{fmt::format("the convolution: {}", head_plan.error().message)};
  // The chain's intermediates are fp32, which a bf16 module's convolution does not write.
  if (head_plan->bf16)
    return Error{"a bf16 convolution followed by other steps (the chain's intermediates are fp32; a bf16 convolution "
                 "has a seed alone or with a pointwise epilogue)"};
  plan.head = *head_plan;
  // conv_epilogue's pattern is "<epilogue>, y = <convolution>"; without an epilogue, the convolution alone.
  plan.head_pattern = head_plan->pattern;
  if (!plan.head.has_epilogue() && plan.head_pattern.starts_with("y, y = ")) plan.head_pattern.erase(0, 7);
  plan.head_shape = y.type->shape;
  plan.head_bytes = result_bytes(y.type->shape);
  plan.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size());
  const Node& x = g.node(*conv.args.at(0).ref);
  if (!x.type || !out.type) return Error{"the convolved input or the output has no tensor type in the trace"};
  plan.input_shape = x.type->shape;
  plan.output_shape = out.type->shape;
  // The next seeds read y where forward input 0 was; a step that reads that input too gets it after the problem's
  // forward inputs (rest_after_head).
  if (g.num_inputs < 1 || plan.head.x_input != 0)
    return Error{"the convolution does not read forward input 0 (the next seed reads the convolution's result in "
                 "its place)"};
  // An average pooling right after the head folds into the convolution's weights when the rest after it chains:
  // the pooled value is then the head's result (pooled_head.h). Else the pooling is a step like any other.
  if (auto pooled = match_pooled_head(g, conv, split, plan.head); pooled) {
    const Node& pool = g.node(pooled->pool);
    ConvThenPlan folded = plan;
    folded.traced = plan.head;
    folded.head = folded_conv_plan(plan.head, *pooled, pool.type->shape);
    folded.head_pattern = fmt::format("{} of {}", pooled->pool_pattern, plan.head_pattern);
    folded.head_shape = pool.type->shape;
    folded.head_bytes = result_bytes(pool.type->shape);
    folded.pooled = std::move(*pooled);
    if (add_steps(g, folded.pooled->pool, second, folded).ok()) return folded;
  }
  if (auto s = add_steps(g, split, second, plan); !s) return s.error();
  return plan;  // the caller checks the results against the judge's cap (in passes over the batch if need be)
}

int64_t results_bytes(const ConvThenPlan& plan) {
  int64_t bytes = plan.head_bytes;
  for (const auto& s : plan.steps) bytes += s.bytes;
  return bytes;
}

// Each part's workspace follows the one before (the chain's `used` grows): the convolution's path is chosen for
// what the problem's cap leaves beside the results and the steps' own. The parts' workspaces are upper bounds
// (the chain asks each part's own size at run time), so they choose the path but refuse nothing.
void choose_head_path(ConvThenPlan& plan, int64_t cap) {
  int64_t steps_scratch = 0;
  for (const auto& s : plan.steps) steps_scratch += then_step_scratch(*s.seed);
  const int64_t folded_weight = plan.pooled ? folded_weight_bytes(plan.head) : 0;
  choose_conv_path(plan.head, cap - results_bytes(plan) - steps_scratch - folded_weight);
}

const std::vector<int64_t>& input0_shape(const OpGraph& g) {
  for (const Node& n : g.nodes)
    if (n.op == Op::input && n.index == 0 && n.type) return n.type->shape;
  static const std::vector<int64_t> none;
  return none;
}

// The chain in passes of the largest divisor of the batch whose results fit `cap`, planned for a graph traced at
// that batch; or why it cannot run so.
Result<ConvThenPlan> in_batch_passes(const OpGraph& g, SecondSeedMatcher second, int64_t cap) {
  if (std::string why = batch_mixing_reason(g); !why.empty()) return Error{why};
  auto out = single_output(g);
  if (!out || !(*out)->type || (*out)->type->dtype != "float32")
    return Error{"the output is not one float32 tensor (a pass moves along it as fp32)"};
  const std::vector<int64_t>& x = input0_shape(g);  // batch_mixing_reason found it with a batch dimension
  const std::vector<int64_t>& y = (*out)->type->shape;
  const int64_t batch = x.at(0), in_row = product(x, 1, x.size()), out_row = product(y, 1, y.size());
  for (int64_t images = batch / 2; images >= 1; --images) {
    // Every pass starts 16-byte aligned in x and in the output, as the whole tensors do: the parts may load and
    // store four floats at a time.
    if (batch % images != 0 || images * in_row % 4 != 0 || images * out_row % 4 != 0) continue;
    auto pass = plan_conv_then(graph_with_batch(g, images), second);
    if (!pass) return Error{fmt::format("at {} images a pass: {}", images, pass.error().message)};
    if (results_bytes(*pass) > cap) continue;
    pass->batch = batch;
    pass->batch_chunk = images;
    return pass;
  }
  return Error{"no pass of whole images whose results fit starts 16-byte aligned"};
}

}  // namespace

Result<ConvThenPlan> match_conv_then(const OpGraph& g, SecondSeedMatcher second) {
  auto plan = plan_conv_then(g, second);
  if (!plan) return plan.error();
  const int64_t cap = judge_workspace_cap(g);
  const int64_t results = results_bytes(*plan);
  if (results > cap) {
    // Only results that alone pass the cap are sure to be refused at load: then the batch goes in passes.
    auto passes = in_batch_passes(g, second, cap);
    if (!passes)
      return Error{fmt::format("the convolution's and the steps' results ({} bytes) do not fit the judge's workspace "
                               "cap for this problem ({} bytes), and the chain cannot run in passes over the batch: {}",
                               results, cap, passes.error().message)};
    // The passes read and write the traced tensors in place: the call's shapes stay the traced ones.
    passes->input_shape = plan->input_shape;
    passes->output_shape = plan->output_shape;
    plan = std::move(passes);
  }
  choose_head_path(*plan, cap);
  return plan;
}

std::string conv_then_description(const ConvThenPlan& plan) {
  std::vector<std::string> steps;
  for (const auto& s : plan.steps) steps.push_back(s.seed->description());
  return fmt::format("convolution{}, then {}: y = {}",
                     plan.pooled ? " with the average pooling folded into its weights" : "", fmt::join(steps, ", then "),
                     plan.head_pattern);
}

std::string conv_then_pattern(const ConvThenPlan& plan) {
  std::vector<std::string> steps;
  for (const auto& s : plan.steps) steps.push_back(s.seed->pattern());
  return fmt::format("{}{}, then {}; y = {}", conv_kernel_name(plan.head), plan.pooled ? " on pooled weights" : "",
                     fmt::join(steps, ", then "), plan.head_pattern);
}

Result<std::string> emit_conv_then(const ConvThenPlan& plan, const CommentText& problem) {
  auto head = conv_library_text(plan.head);
  if (!head) return head.error();
  if (auto s = replace_library_lines(
          *head,
          {{"extern \"C\" size_t cutegen_workspace_bytes(", "static size_t conv_workspace_bytes("},
           {"extern \"C\" int cutegen_forward_ws(", "static int conv_forward_ws("}},
          "library/conv_implicit_gemm.cu", kConvThenSeedFile);
      !s)
    return s.error();
  const ThenFile file{.header = then_header(kConvThenHeader, plan.steps, plan.head_pattern, plan.head_shape),
                      .chain_namespace = "conv_then",
                      .head_noun = "convolution",
                      .seed_file = kConvThenSeedFile,
                      .num_contract_inputs = plan.num_contract_inputs,
                      .num_forward_inputs = plan.num_forward_inputs,
                      .input_shape = plan.input_shape,
                      .output_shape = plan.output_shape,
                      .batch = plan.batch,
                      .batch_chunk = plan.batch_chunk};
  // A pooled head: the folded weight's kernel and the two functions that call the convolution on it, after its text.
  if (plan.pooled) *head += pooled_head_text(plan.traced, plan.head, *plan.pooled);
  const std::string entry = plan.pooled ? "pooled" : "conv";
  const ThenHead chain_head{.kernel = std::move(*head),
                            .what = plan.pooled ? "the convolution on pooled weights -> y" : "the convolution -> y",
                            .size_call = entry + "_workspace_bytes(inputs, kNumInputs, &out, 1)",
                            .forward_call = entry + "_forward_ws(inputs, kNumInputs, &out, 1, base + used, part, stream)",
                            .shape = plan.head_shape,
                            .bytes = plan.head_bytes,
                            .file_scope = true};
  return emit_then_file(file, chain_head, plan.steps, problem);
}

}  // namespace cutegen::seed
