#include "seed/routes/gemm_then/gemm_then_route.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/plan_parts.h"
#include "seed/routes/gemm/folded_gemm_kernel.h"
#include "seed/routes/gemm/gemm_kernel.h"
#include "seed/routes/gemm/gemm_route.h"
#include "seed/routes/gemm/library_gemm.h"
#include "seed/routes/gemm_epilogue/gemm_epilogue_route.h"
#include "seed/routes/then/chain_values.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kGemmThenHeader =
#include "seed/gemm_then_kernel.inc"
    ;
constexpr const char* kGemmThenSeedFile = "src/seed/routes/gemm_then/gemm_then_route.cpp";

// Whether the head's result can be `c`: the ops after it read only c and leaves -- with `input0`, forward input 0 too,
// directly or through identities (original_x = x.clone().detach()), which rest_after_head passes the steps.
bool head_cut(const OpGraph& g, const std::vector<int>& reach, const Node& c, bool input0) {
  const std::vector<int> across = reads_across(g, reach, c);
  if (across.empty()) return !input0;  // tried in the first pass
  return input0 && std::all_of(across.begin(), across.end(), [&](int id) {
           const Node& base = identity_base(g, g.node(id));
           return base.op == Op::input && base.index == 0;
         });
}

bool on_library_gemm(const GemmPlan& head) { return head.kernel == GemmKernel::library; }

// The head's own workspace, as far as its plan tells (the match's check of the judge's cap).
int64_t head_workspace_bytes(const GemmPlan& head) {
  if (head.kernel == GemmKernel::folded) return folded_gemm_workspace_bytes(head);
  return on_library_gemm(head) ? library_gemm_workspace_bytes(head) : tiled_gemm_workspace_bound(head);
}

// What the description and pattern call the head's kernel.
std::string_view head_kernel_name(const GemmPlan& head, bool short_form) {
  if (head.kernel == GemmKernel::folded) return short_form ? "folded GEMV" : "folded through the product: a GEMV";
  if (on_library_gemm(head)) return short_form ? "library 3xTF32 GEMM" : "the library's 3xTF32 GEMM";
  if (head.kernel == GemmKernel::skinny) return short_form ? "skinny 3xTF32 GEMM" : "the skinny 3xTF32 GEMM";
  return short_form ? "tiled GEMM" : "the tiled GEMM";
}

// The header's sentence on the kernel that writes y.
std::string head_kernel_text(const GemmPlan& head) {
  if (head.kernel == GemmKernel::folded)
    return "The folded GEMV\n"
           "// (folded_gemm_kernel.cu.in: the row's sum or mean of an affine epilogue moved through the product by\n"
           "// linearity, so the product itself is never formed)";
  if (on_library_gemm(head) && !head.has_epilogue() && head.columns.empty())
    return "The library's 3xTF32 GEMM\n"
           "// (library/gemm_sm90_3xtf32.cu, the product alone: the plain GEMM route's seed, nothing fused)";
  if (on_library_gemm(head))
    return "The library's 3xTF32 GEMM\n"
           "// (library/gemm_sm90_3xtf32.cu, with the epilogue the gemm_epilogue route fuses into its store)";
  if (head.kernel == GemmKernel::skinny)
    return "The skinny 3xTF32 GEMM\n"
           "// (gemm_kernel.cu.in with skinny_gemm_kernel.cu.in: few rows of A, the weight split in shared memory as it\n"
           "// streams, with the epilogue the gemm_epilogue route fuses into its store)";
  return "The seed's tiled GEMM\n"
         "// (gemm_kernel.cu.in: strict fp32 on CUDA cores, for a product the library GEMM does not take, with the\n"
         "// epilogue the gemm_epilogue route fuses into its store)";
}

}  // namespace

Result<GemmThenPlan> match_gemm_then(const OpGraph& g, SecondSeedMatcher second) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node& out = **output;
  if (g.num_inputs < 1 || !out.type) return Error{"no forward input, or an output without a tensor type"};
  const std::vector<int> reach = reachable(g);
  // The reason: what stopped the rest after the largest head on the library GEMM, else gemm_epilogue's own for
  // the whole graph (a product on the tiled GEMM that does not chain keeps that route's answer, as it did before
  // the tiled GEMM could be a head: it names what the epilogue cannot fuse).
  std::optional<std::string> rest_reason;
  // The cuts, latest first: those after which the rest reads only y and leaves, then those after which it reads
  // forward input 0 again too (a residual of the input: KernelBench level 2's 51), so that a graph that chained
  // before the rest could read it keeps its head.
  std::vector<int> cuts;
  for (const bool input0 : {false, true})
    for (auto it = reach.rbegin(); it != reach.rend(); ++it)
      if (head_cut(g, reach, g.node(*it), input0)) cuts.push_back(*it);
  for (int id : cuts) {
    const Node& c = g.node(id);
    if (is_leaf(c.op.op()) || c.id == out.id || !c.type || c.type->dtype != "float32") continue;
    const Node& stored = g.node(stored_value(g, c));
    if (is_leaf(stored.op.op())) continue;
    OpGraph head_graph = g;
    head_graph.outputs = {Operand{.ref = stored.id}};
    auto head = match_gemm_epilogue(head_graph);
    // A batched product with nothing fused (attention's q @ k^T) the epilogue route leaves to the plain GEMM route,
    // whose library GEMM takes a batch: the head then, as the product alone would be seeded.
    if (!head)
      if (auto plain = match_gemm(head_graph); plain && plain->batch > 1) {
        if (plain->kernel == GemmKernel::library)
          head = std::move(*plain);
        else if (!rest_reason) {
          // Where the batch is the blocker, whether its split operands would fit once it were one: the next blocker.
          const int64_t split = library_gemm_workspace_bytes(*plain);
          rest_reason = fmt::format(
              "the batched matrix product y = {} is not on the library GEMM ({}){}", plain->pattern,
              library_gemm_refusal(*plain),
              split > kWorkspaceCeiling ? fmt::format(", and its split operands would need {} bytes of workspace, above "
                                                      "the judge's 4 GiB",
                                                      split)
                                        : "");
        }
      }
    // The library GEMM, or the tiled one where the library's refuses the product (too few tiles, split operands
    // over the judge's cap: KernelBench level 2's 55) -- the kernel gemm_epilogue gives the head alone. Not a
    // GEMV or split K: a plain product without an epilogue, which a head with a step after it seldom is.
    if (!head || (head->kernel != GemmKernel::library && head->kernel != GemmKernel::tiled &&
                  head->kernel != GemmKernel::skinny && head->kernel != GemmKernel::folded))
      continue;
    auto note = [&, library = on_library_gemm(*head) || head->kernel == GemmKernel::folded](std::string why) {
      if (library && !rest_reason) rest_reason = std::move(why);
    };
    auto steps = chain_steps_after(g, c.id, stored.id, second, "matrix product", /*head_file_scope=*/false);
    if (!steps) {
      note(steps.error().message);
      continue;
    }
    GemmThenPlan plan{.head = std::move(*head),
                      .head_shape = stored.type->shape,
                      .head_bytes = result_bytes(stored.type->shape),
                      .steps = std::move(*steps),
                      .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                      .num_forward_inputs = g.num_inputs,
                      .output_shape = out.type->shape};
    if (stored.id != c.id) plan.head_read_shape = c.type->shape;
    for (const Node& n : g.nodes)
      if (n.op == Op::input && n.index == 0 && n.type) plan.input_shape = n.type->shape;
    if (plan.input_shape.empty()) return Error{"forward input 0 has no tensor type in the trace"};
    int64_t intermediates = plan.head_bytes, scratch = head_workspace_bytes(plan.head);
    for (const ThenStep& s : plan.steps) intermediates += s.bytes;
    fit_convolution_parts(plan.steps, intermediates, judge_workspace_cap(g));
    for (const ThenStep& s : plan.steps) scratch = std::max(scratch, then_step_scratch(*s.seed));
    if (const int64_t cap = judge_workspace_cap(g); intermediates + scratch > cap)
      return Error{fmt::format("the product's and the steps' results ({} bytes) and the largest part's workspace ({} "
                               "bytes) do not fit the judge's workspace cap for this problem ({} bytes)",
                               intermediates, scratch, cap)};
    return plan;
  }
  if (rest_reason) return Error{*rest_reason};
  auto whole = match_gemm_epilogue(g);
  return whole ? Error{"a matrix product with an epilogue (the gemm_epilogue route's)"} : whole.error();
}

std::string gemm_then_description(const GemmThenPlan& plan) {
  std::vector<std::string> steps;
  for (const auto& s : plan.steps) steps.push_back(s.seed->description());
  return fmt::format("matrix product ({}), then {}: y = {}", head_kernel_name(plan.head, false),
                     fmt::join(steps, ", then "), plan.head.pattern);
}

std::string gemm_then_pattern(const GemmThenPlan& plan) {
  std::vector<std::string> steps;
  for (const auto& s : plan.steps) steps.push_back(s.seed->pattern());
  return fmt::format("{}, then {}; y = {}", head_kernel_name(plan.head, true),
                     fmt::join(steps, ", then "), plan.head.pattern);
}

Result<std::string> emit_gemm_then(const GemmThenPlan& plan, const CommentText& problem) {
  auto head = emit_gemm(plan.head, problem);
  if (!head) return head.error();
  const StaticEntries entries = make_entries_static(*head, "gemm_");
  // The library GEMM's text has cutegen_forward_ws and cutegen_workspace_bytes; the tiled GEMM's has all three,
  // one way compiled out (SEED_WORKSPACE), and the chain calls the one its build keeps.
  // The folded GEMV's likewise has only the workspace pair.
  const bool ws_only = on_library_gemm(plan.head) || plan.head.kernel == GemmKernel::folded;
  const bool workspace = ws_only || tiled_gemm_uses_workspace(plan.head);
  if (entries.forward != !ws_only || !entries.forward_ws || !entries.workspace_bytes ||
      head->find("extern \"C\"") != std::string::npos)
    return Error{fmt::format("the {} seed does not have exactly the entry points {} as {} expects",
                             head_kernel_name(plan.head, true),
                             ws_only ? "cutegen_forward_ws and cutegen_workspace_bytes"
                                     : "cutegen_forward, and cutegen_forward_ws with cutegen_workspace_bytes",
                             kGemmThenSeedFile)};
  // In a namespace of its own (namespaced_head): a step that is a library GEMM too defines the same functions.
  auto parts = split_prelude(*head, "gemm_epilogue", kGemmThenSeedFile);
  if (!parts) return parts.error();
  std::string header = then_header(kGemmThenHeader, plan.steps, plan.head.pattern, plan.head_shape);
  replace_placeholder(header, "HEAD_KERNEL_TEXT", head_kernel_text(plan.head));
  const ThenFile file{.header = header,
                      .chain_namespace = "gemm_then",
                      .head_noun = "matrix product",
                      .seed_file = kGemmThenSeedFile,
                      .num_contract_inputs = plan.num_contract_inputs,
                      .num_forward_inputs = plan.num_forward_inputs,
                      .input_shape = plan.input_shape,
                      .output_shape = plan.output_shape,
                      .shared_scratch = true};
  ThenHead chain_head = namespaced_head(*parts, "gemm_", workspace, "the matrix product -> y", plan.head_shape,
                                        plan.head_bytes);
  chain_head.read_shape = plan.head_read_shape;
  return emit_then_file(file, chain_head, plan.steps, problem);
}

}  // namespace cutegen::seed
