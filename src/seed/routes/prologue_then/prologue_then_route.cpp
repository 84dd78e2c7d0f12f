#include "seed/routes/prologue_then/prologue_then_route.h"

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/routes/then/chain_values.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kPrologueThenHeader =
#include "seed/prologue_then_kernel.inc"
    ;
constexpr const char* kPrologueThenSeedFile = "src/seed/routes/prologue_then/prologue_then_route.cpp";

bool is_product_node(const Node& n) {
  return n.op == Op::conv || n.op == Op::conv_transpose || n.op == Op::linear || n.op == Op::matmul;
}

std::string product_noun(const Node& n) {
  if (n.op == Op::conv) return "convolution";
  if (n.op == Op::conv_transpose) return "transposed convolution";
  if (n.op == Op::linear) return "linear";
  return "matrix product";
}

// The operands of `n` that are computed: a convolution's or a linear's input, either side of a matmul, that is
// neither a forward input nor a parameter, nor a view of one (nor, in a matmul, the transpose of one).
std::vector<int> computed_operands(const OpGraph& g, const Node& n) {
  std::vector<int> computed;
  const std::size_t tensors = n.op == Op::matmul ? 2 : 1;  // the others are the module's weight and bias
  for (std::size_t i = 0; i < tensors && i < n.args.size(); ++i) {
    if (!n.args[i].ref) continue;
    const Node* v = &g.node(*n.args[i].ref);
    if (n.op == Op::matmul && v->op == Op::transpose && !v->args.empty() && v->args[0].ref)
      v = &g.node(*v->args[0].ref);
    if (!is_leaf(through_views(g, *v).op.op())) computed.push_back(*n.args[i].ref);
  }
  return computed;
}

// The node of forward input 0, or -1.
int forward_input0(const OpGraph& g) {
  for (const Node& n : g.nodes)
    if (n.op == Op::input && n.index == 0) return n.id;
  return -1;
}

}  // namespace

const Node* product_of_computed_value(const OpGraph& g) {
  for (int id : reachable(g)) {  // ascending: the first product in execution order
    const Node& n = g.node(id);
    if (is_product_node(n)) return computed_operands(g, n).empty() ? nullptr : &n;
  }
  return nullptr;
}

Result<PrologueThenPlan> match_prologue_then(const OpGraph& g, SecondSeedMatcher second) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node& out = **output;
  const Node* product = product_of_computed_value(g);
  if (!product) return Error{"no convolution or matrix product of a computed value"};
  PrologueThenPlan plan;
  plan.product_noun = product_noun(*product);
  const std::vector<int> computed = computed_operands(g, *product);
  if (computed.size() != 1)
    return Error{fmt::format("both operands of the matrix product are computed ({}, {}): the steps before a product "
                             "end in the one value it reads",
                             g.node(computed[0]).op, g.node(computed[1]).op)};
  const Node& c = g.node(computed[0]);
  plan.product_input = c.op.spelling();
  if (!out.type || g.num_inputs < 1) return Error{"no forward input, or an output without a tensor type"};
  if (!c.type || c.type->dtype != "float32")
    return Error{fmt::format("the {}'s input ({}) is not a float32 tensor (a chain's results are)", plan.product_noun,
                             c.op)};
  const std::vector<int> reach = reachable(g);
  // What the ops from the product on read besides its input and leaves: forward input 0 (a residual of the input)
  // and values the prologue stores are extra reads of the parts after it.
  const std::optional<CutReads> cut = cut_reads(g, reads_across(g, reach, c));
  if (!cut)
    return Error{fmt::format("the ops from the {0} on read a Python number or a value computed before its input ({1}) "
                             "that is not contiguous float32: no value splits the graph before the {0}",
                             plan.product_noun, c.op)};
  const Node& stored = g.node(stored_value(g, c));
  if (is_leaf(stored.op.op()))
    return Error{fmt::format("the {}'s input is a view of {} that is not contiguous float32 (nothing to compute "
                             "before it)",
                             plan.product_noun, contract_name(g, stored))};
  // The prologue: the table's seeds for the graph that returns the product's input, the first reading the
  // problem's inputs. At most kMaxThenSteps parts, so that at least the product's follows.
  OpGraph before = g;
  before.outputs = {Operand{.ref = stored.id}};
  const ChainStart problem_inputs{.input0 = forward_input0(g), .num_forward = g.num_inputs};
  // The prologue's steps store what the product's part and those after it read again.
  const std::set<int> keep(cut->stored_by_before.begin(), cut->stored_by_before.end());
  auto prologue = steps_for(before, second, kMaxThenSteps, problem_inputs, keep);
  if (!prologue)
    return Error{fmt::format("before the {}: {}", plan.product_noun, no_steps_reason(before, second, kMaxThenSteps))};
  prologue->back().bytes = result_bytes(stored.type->shape);  // an intermediate, not the output
  if (stored.id != c.id) prologue->back().read_shape = c.type->shape;
  prologue->back().stored = stored.id;
  prologue->back().read = c.id;
  if (!stored_by(*prologue, cut->stored_by_before))
    return Error{fmt::format("the ops from the {0} on read values computed before its input ({1}) that no step before "
                             "the {0} keeps",
                             plan.product_noun, c.op)};
  // The rest, from the product on, with its input as forward input 0: the product's seed (with the epilogue its
  // route fuses) and what follows, in the parts the prologue leaves of 1 + kMaxThenSteps.
  const OpGraph after = graph_after(g, c.id, cut->nodes);
  const int budget = kMaxThenSteps + 1 - static_cast<int>(prologue->size());
  auto rest = steps_for(after, second, budget, {.input0 = c.id, .extras = cut->reads, .num_forward = g.num_inputs});
  if (!rest)
    return Error{fmt::format("the {} of {}: {}", plan.product_noun, c.op, no_steps_reason(after, second, budget))};
  if (std::string why = then_file_scope_refusal(*rest, /*head_file_scope=*/false); !why.empty())
    return Error{fmt::format("the {} of {}: {}", plan.product_noun, c.op, why)};
  plan.product_part = prologue->size();
  plan.parts = std::move(*prologue);
  plan.parts.insert(plan.parts.end(), rest->begin(), rest->end());
  // Part 1 is the file's head, chain value 0; the values the later parts read again are the parts' results.
  if (auto resolved = resolve_extra_reads(g, plan.parts[0].stored, plan.parts[0].read,
                                          std::span<ThenStep>(plan.parts).subspan(1));
      !resolved)
    return resolved.error();
  plan.num_forward_inputs = g.num_inputs;
  plan.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size());
  plan.output_shape = out.type->shape;
  for (const Node& n : g.nodes)
    if (n.op == Op::input && n.index == 0 && n.type) plan.input_shape = n.type->shape;
  if (plan.input_shape.empty()) return Error{"forward input 0 has no tensor type in the trace"};
  // The parts run one after another on the stream, so they share one scratch region after the intermediates.
  int64_t intermediates = 0, scratch = 0;
  for (const ThenStep& p : plan.parts) intermediates += p.bytes;
  fit_convolution_parts(plan.parts, intermediates, judge_workspace_cap(g));
  for (const ThenStep& p : plan.parts) scratch = std::max(scratch, then_step_scratch(*p.seed));
  if (const int64_t cap = judge_workspace_cap(g); intermediates + scratch > cap)
    return Error{fmt::format("the steps' results ({} bytes) and the largest part's workspace ({} bytes) around the "
                             "{} do not fit the judge's workspace cap for this problem ({} bytes)",
                             intermediates, scratch, plan.product_noun, cap)};
  return plan;
}

std::string prologue_then_description(const PrologueThenPlan& plan) {
  std::vector<std::string> parts;
  for (const auto& p : plan.parts) parts.push_back(p.seed->description());
  return fmt::format("{}", fmt::join(parts, ", then "));
}

std::string prologue_then_pattern(const PrologueThenPlan& plan) {
  std::vector<std::string> parts;
  for (const auto& p : plan.parts) parts.push_back(p.seed->pattern());
  return fmt::format("{}", fmt::join(parts, ", then "));
}

Result<std::string> emit_prologue_then(const PrologueThenPlan& plan, const CommentText& problem) {
  if (plan.parts.size() < 2) return Error{"a prologue chain of fewer than two parts"};
  auto head = then_head_of(plan.parts[0], problem, kPrologueThenSeedFile);
  if (!head) return head.error();
  std::string lines;
  for (std::size_t i = 0; i < plan.parts.size(); ++i)
    lines += fmt::format("//   part {}: {}\n", i + 1, plan.parts[i].seed->pattern());
  std::string header = kPrologueThenHeader;
  replace_placeholder(header, "PART_COUNT", std::to_string(plan.parts.size()));
  replace_placeholder(header, "PRODUCT_NOUN", plan.product_noun);
  replace_placeholder(header, "PRODUCT_PART", std::to_string(plan.product_part + 1));
  replace_placeholder(header, "PRODUCT_INPUT", plan.product_input);
  replace_placeholder(header, "HEAD_SHAPE", shape_text(plan.parts[0].shape));
  replace_placeholder(header, "PART_LINES", lines);
  const ThenFile file{.header = header,
                      .chain_namespace = "prologue_then",
                      .head_noun = "first step",
                      .seed_file = kPrologueThenSeedFile,
                      .num_contract_inputs = plan.num_contract_inputs,
                      .num_forward_inputs = plan.num_forward_inputs,
                      .input_shape = plan.input_shape,
                      .output_shape = plan.output_shape,
                      .shared_scratch = true};
  return emit_then_file(file, *head, std::vector<ThenStep>(plan.parts.begin() + 1, plan.parts.end()), problem);
}

}  // namespace cutegen::seed
