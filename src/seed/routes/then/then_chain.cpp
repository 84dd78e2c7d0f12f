#include "seed/routes/then/then_chain.h"

#include <algorithm>
#include <regex>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/plan_parts.h"
#include "seed/pointwise_ops.h"
#include "seed/routes/broadcast/broadcast_route.h"
#include "seed/routes/conv/conv_plan.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/routes/conv_stats/conv_stats_plan.h"
#include "seed/routes/conv_then/conv_then_plan.h"
#include "seed/routes/gemm/folded_gemm_kernel.h"
#include "seed/routes/gemm/gemm_kernel_choice.h"
#include "seed/routes/gemm/gemm_plan.h"
#include "seed/routes/gemm/gemm_route.h"
#include "seed/routes/gemm/library_gemm.h"
#include "seed/routes/gemm_epilogue/gemm_epilogue_route.h"
#include "seed/routes/gemm_then/gemm_then_plan.h"
#include "seed/routes/norm/norm_route.h"
#include "seed/routes/pointwise/pointwise_route.h"
#include "seed/routes/pool/pool_route.h"
#include "seed/routes/prologue_then/prologue_then_plan.h"
#include "seed/routes/reduce/reduce_route.h"
#include "seed/routes/row_softmax/row_softmax_route.h"
#include "seed/routes/separable_conv/separable_conv_plan.h"
#include "seed/routes/separable_conv/separable_conv_route.h"
#include "seed/routes/then/chain_values.h"
#include "seed/store_epilogue.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kThenChainTemplate =
#include "seed/then_chain_kernel.inc"
    ;

// The macros a step's text defines (its knobs: `#define NAME`), renamed `S<step>_NAME` wherever the whole word
// appears in it when an earlier part of the file defines the same name: two steps of one route (two pointwise
// seeds, say) would otherwise share one template's knobs -- the first's #define would silently set the
// second's -- and `cutegen tune` would see one knob twice.
std::vector<std::string> defined_macros(const std::string& text) {
  static const std::regex define(R"(^#define ([A-Za-z_][A-Za-z0-9_]*))", std::regex::multiline);
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), define); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1].str());
  return names;
}

void rename_shared_macros(std::string& text, int step, std::set<std::string>& defined) {
  for (const std::string& name : defined_macros(text))
    // NDEBUG is no knob: renamed, a library GEMM step after a part that defines it only under a condition (the
    // library convolution's CIG_TMA path) would include CUTLASS's headers with their asserts on, and ptxas then
    // serialises every wgmma (docs/library.md).
    if (defined.count(name) && name != "NDEBUG")
      text = std::regex_replace(text, std::regex("\\b" + name + "\\b"), fmt::format("S{}_{}", step, name));
  for (const std::string& name : defined_macros(text)) defined.insert(name);
}

}  // namespace

// The library convolution includes CUTLASS's headers in the middle, under CIG_TMA, closing its own namespace
// around them: moved in front, such an #include would leave its #if and the defines before it behind, so the text
// goes at the file's scope as it is.
bool includes_after_code(const std::string& text) {
  bool code = false;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + at, end - at);
    if (line.starts_with("#include") && code) return true;
    if (!(line == "\n" || line.starts_with("//") || line.starts_with("#"))) code = true;
    at = end;
  }
  return false;
}

bool then_part_needs_file_scope(const MatchedPlan& seed) {
  return dynamic_cast<const TypedPlan<ConvPlan>*>(&seed) || dynamic_cast<const TypedPlan<SeparableConvPlan>*>(&seed);
}

std::string then_file_scope_refusal(const std::vector<ThenStep>& parts, bool head_file_scope) {
  bool taken = head_file_scope;
  for (const ThenStep& p : parts) {
    if (!then_part_needs_file_scope(*p.seed)) continue;
    if (taken)
      return fmt::format("two library convolutions in one chain (the {} route's seed is the second): the "
                         "convolution's text includes CUTLASS's headers after its code, at the file's scope, which "
                         "holds one",
                         p.seed->route());
    taken = true;
  }
  return "";
}

namespace {

// A part's kernel placed in the chained file: in namespace `ns` after its prelude (through its last #include), its
// entry points renamed `<prefix>forward...`; or, when it includes headers after code, at the file's scope as it is,
// its entry points renamed `<file_prefix>forward...` so that they differ from every other part's. `call` is how
// the chain names them. Error: not exactly one contract entry point.
struct PlacedPart {
  std::string text;
  std::string call;  // "seed_step2::second_", "::step2_"
  StaticEntries entries;
  bool file_scope = false;
};

Result<PlacedPart> place_part(std::string text, std::string_view route, const std::string& ns,
                              const std::string& prefix, const std::string& file_prefix, std::string_view seed_file) {
  PlacedPart part;
  part.file_scope = includes_after_code(text);
  part.entries = make_entries_static(text, part.file_scope ? file_prefix : prefix);
  if (part.entries.forward == part.entries.forward_ws || part.entries.forward_ws != part.entries.workspace_bytes ||
      text.find("extern \"C\"") != std::string::npos)
    return Error{fmt::format("the {} route's kernel does not have exactly one entry point of the contract "
                             "(cutegen_forward, or cutegen_forward_ws with cutegen_workspace_bytes) as {} expects",
                             route, seed_file)};
  if (part.file_scope) {
    part.text = std::move(text);
    part.call = "::" + file_prefix;
  } else {
    // Its prelude -- comments and preprocessor lines through its last #include, the `#define NDEBUG` that must
    // precede CUTLASS's headers among them -- stays in front of the namespace, in its order: a header first
    // included inside a namespace would declare everything there.
    auto split = split_prelude(text, route, seed_file);
    if (!split) return split.error();
    int open = 0;  // a conditional the prelude leaves open would take the namespace's lines into it
    for (std::size_t at = 0; at < split->prelude.size();) {
      std::size_t end = split->prelude.find('\n', at);
      end = end == std::string::npos ? split->prelude.size() : end + 1;
      const std::string_view line(split->prelude.data() + at, end - at);
      open += line.starts_with("#if") ? 1 : line.starts_with("#endif") ? -1 : 0;
      at = end;
    }
    if (open != 0)
      return Error{fmt::format("the {} route's kernel leaves a conditional open around its #include lines, which {} "
                               "keeps in front of the namespace it puts the kernel in",
                               route, seed_file)};
    part.text = fmt::format("{0}namespace {1} {{\n{2}}}  // namespace {1}\n", split->prelude, ns, split->body);
    part.call = ns + "::" + prefix;
  }
  return part;
}

bool contiguous_fp32(const Node& n) {
  return n.type && n.type->dtype == "float32" && n.type->contiguous;
}

// The chain's code for one part (<namespace>::run): build its output descriptor, ask its workspace, call it.
// Its workspace follows the previous part's (`used` grows), or, with `shared`, every part's starts where the
// intermediates end and the chain keeps the largest (`scratch`).
std::string step_code(const std::string& what, const std::string& out_decl, const std::string& size_call,
                      const std::string& forward_call, bool shared) {
  return fmt::format(
      "  {{  // {what}\n"
      "{out_decl}"
      "    part = {size_call};\n"
      "    if (part == 0) return CUTEGEN_ERROR_UNSUPPORTED;\n"
      "    part = round_up_256(part);\n"
      "    if (!query) {{\n"
      "      if (used + part > workspace_bytes) return CUTEGEN_ERROR_BAD_ARGUMENTS;\n"
      "      if (int rc = {forward_call}; rc != CUTEGEN_OK) return rc;\n"
      "    }}\n"
      "{grow}"
      "  }}\n",
      fmt::arg("what", what), fmt::arg("out_decl", out_decl), fmt::arg("size_call", size_call),
      fmt::arg("forward_call", forward_call),
      fmt::arg("grow", shared ? "    if (part > scratch) scratch = part;\n" : "    used += part;\n"));
}

// conv_stats is conv_then's chain fused into one file (the convolution, its statistics, the output): inside a larger
// chain it is cut into those parts as conv_then is, the way such graphs were seeded before it existed.
bool is_chain(const MatchedPlan& seed) {
  return dynamic_cast<const TypedPlan<ConvThenPlan>*>(&seed) || dynamic_cast<const TypedPlan<GemmThenPlan>*>(&seed) ||
         dynamic_cast<const TypedPlan<PrologueThenPlan>*>(&seed) ||
         dynamic_cast<const TypedPlan<ConvStatsPlan>*>(&seed);
}

}  // namespace

std::string then_step_refusal(const MatchedPlan& seed) {
  if (is_chain(seed))
    return fmt::format("the {} route's seed is a chain itself (a chain's steps are single seeds, cut where one value "
                       "crosses)",
                       seed.route());
  if (const auto* gemm = dynamic_cast<const TypedPlan<GemmPlan>*>(&seed);
      gemm && (gemm->plan().kernel == GemmKernel::tiled || gemm->plan().kernel == GemmKernel::split_k ||
               gemm->plan().kernel == GemmKernel::skinny))
    return fmt::format("a product in a chain is not on the library GEMM ({}): a chain's products are the "
                       "library's 3xTF32 GEMM or a GEMV",
                       gemm->plan().kernel_reason);
  return "";
}

int64_t then_step_scratch(const MatchedPlan& seed) {
  if (const auto* gemm = dynamic_cast<const TypedPlan<GemmPlan>*>(&seed);
      gemm && gemm->plan().kernel == GemmKernel::library)
    return library_gemm_workspace_bytes(gemm->plan());
  if (const auto* gemm = dynamic_cast<const TypedPlan<GemmPlan>*>(&seed);
      gemm && gemm->plan().kernel == GemmKernel::folded)
    return folded_gemm_workspace_bytes(gemm->plan());
  if (const auto* conv = dynamic_cast<const TypedPlan<ConvPlan>*>(&seed)) return conv_workspace_bound(conv->plan());
  if (const auto* separable = dynamic_cast<const TypedPlan<SeparableConvPlan>*>(&seed))
    return separable->plan().intermediate_bytes + conv_workspace_bound(separable->plan().second);
  return kStepScratchAllowance;
}

namespace {

// The part made again with its convolution's path chosen for `budget` (fewer images per chunk of the TMA path's
// packed copies, or the gather kernel), or nullptr when it has no convolution on the TMA path.
std::shared_ptr<const MatchedPlan> fitted_to(const MatchedPlan& seed, int64_t budget) {
  auto refit = [&](ConvPlan conv) {
    choose_conv_path(conv, budget);
    return conv;
  };
  if (const auto* conv = dynamic_cast<const TypedPlan<ConvPlan>*>(&seed);
      conv && conv->plan().path == ConvPlan::Path::tma_im2col) {
    if (seed.route() == kConvEpilogueRoute.name) return matched_plan<kConvEpilogueRoute>(refit(conv->plan()));
    if (seed.route() == kConvRoute.name) return matched_plan<kConvRoute>(refit(conv->plan()));
  }
  if (const auto* separable = dynamic_cast<const TypedPlan<SeparableConvPlan>*>(&seed);
      separable && separable->plan().second.path == ConvPlan::Path::tma_im2col) {
    SeparableConvPlan plan = separable->plan();
    plan.second = refit(plan.second);
    return matched_plan<kSeparableConvRoute>(std::move(plan));
  }
  return nullptr;
}

}  // namespace

void fit_convolution_parts(std::vector<ThenStep>& parts, int64_t intermediates, int64_t cap) {
  // The parts share one region, as large as the largest part's workspace: each part on the TMA path that asks
  // more than the cap leaves takes fewer images per chunk, or the gather kernel; refitting one that asks less
  // would not help.
  const int64_t budget = cap - intermediates;
  for (ThenStep& p : parts)
    if (then_step_scratch(*p.seed) > budget)
      if (auto fitted = fitted_to(*p.seed, budget)) p.seed = std::move(fitted);
}

int64_t round_up_to(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

int64_t result_bytes(const std::vector<int64_t>& shape) {
  return round_up_to(product(shape, 0, shape.size()) * 4, 256);
}

bool is_conv_node(const Node& n) { return n.op == Op::conv || n.op == Op::conv_transpose; }

const Node* only_convolution(const OpGraph& g, const std::vector<int>& reach) {
  const Node* found = nullptr;
  for (int id : reach)
    if (is_conv_node(g.node(id))) {
      if (found) return nullptr;
      found = &g.node(id);
    }
  return found;
}

std::set<int> pointwise_after(const OpGraph& g, const Node& root, const std::vector<int>& reach) {
  std::set<int> head{root.id};
  for (int id : reach) {
    const Node& n = g.node(id);
    if (id <= root.id || !n.known || pointwise_arity(n.op.spelling()) == 0 || !n.type ||
        n.type->shape != root.type->shape || n.type->dtype != root.type->dtype)
      continue;
    bool reads_head = false, only_head_and_leaves = true;
    for (const Operand& a : n.args) {
      if (!a.ref) continue;
      if (head.count(*a.ref)) reads_head = true;
      else if (!is_leaf(g.node(*a.ref).op.op())) only_head_and_leaves = false;
    }
    if (reads_head && only_head_and_leaves) head.insert(id);
  }
  return head;
}

ThenHead namespaced_head(const SeedText& parts, const std::string& prefix, bool workspace, std::string what,
                         std::vector<int64_t> shape, int64_t bytes) {
  return ThenHead{.kernel = parts.prelude + "namespace seed_head {\n" + parts.body + "}  // namespace seed_head\n",
                  .what = std::move(what),
                  // Without a workspace, a placeholder part of 256 bytes, as then_head_of gives one.
                  .size_call = workspace ? fmt::format("seed_head::{}workspace_bytes(inputs, kNumInputs, &out, 1)", prefix)
                                         : "size_t{1}",
                  .forward_call =
                      workspace
                          ? fmt::format("seed_head::{}forward_ws(inputs, kNumInputs, &out, 1, base + used, part, stream)",
                                        prefix)
                          : fmt::format("seed_head::{}forward(inputs, kNumInputs, &out, 1, stream)", prefix),
                  .shape = std::move(shape),
                  .bytes = bytes};
}

std::string then_header(std::string header, const std::vector<ThenStep>& steps, const std::string& head_pattern,
                        const std::vector<int64_t>& head_shape) {
  replace_placeholder(header, "STEP_COUNT", std::to_string(steps.size()));
  replace_placeholder(header, "HEAD_PATTERN", head_pattern);
  replace_placeholder(header, "HEAD_SHAPE", shape_text(head_shape));
  replace_placeholder(header, "STEP_LINES", then_step_lines(steps));
  return header;
}

namespace {

// Node `n` of `after` made a forward input at `index`: a contiguous fp32 tensor of its shape, computed no more.
void make_input(Node& n, const TensorType& type, int index) {
  n.op = Op::input;
  n.known = true;
  n.note.clear();
  n.args.clear();
  n.params.clear();
  n.inplace = false;
  n.index = index;
  n.scalar = false;
  n.type = TensorType{.dtype = "float32", .shape = type.shape, .contiguous = true};
}

}  // namespace

OpGraph graph_after(const OpGraph& g, int split, const std::vector<int>& extras) {
  OpGraph after = g;
  Node& y = after.nodes[static_cast<std::size_t>(split)];
  const TensorType type = *g.node(split).type;
  // "y", as the descriptions name the previous result, unless another forward input than the one y replaces has
  // that name (KernelBench level 2's 28 reads an input y after the product).
  bool taken = false;
  for (const Node& n : g.nodes) taken = taken || (n.op == Op::input && n.index != 0 && n.name == "y");
  y.name = taken ? "y_prev" : "y";
  make_input(y, type, 0);
  if (extras.empty()) return after;
  // The extras after g's forward inputs; its parameters and buffers after them.
  const int count = static_cast<int>(extras.size());
  for (Node& n : after.nodes)
    if (n.op == Op::param || (n.op == Op::input && n.index >= g.num_inputs)) n.index += count;
  for (int k = 0; k < count; ++k) {
    Node& e = after.nodes[static_cast<std::size_t>(extras[static_cast<std::size_t>(k)])];
    const Node& was = g.node(e.id);
    // An earlier result read again keeps its name, but for the previous result's: "y0", the chain's first value,
    // where it is the head's y.
    if (e.name == y.name) e.name = "y0";
    if (was.op == Op::input)
      e.index = g.num_inputs + k;
    else
      make_input(e, *was.type, g.num_inputs + k);
  }
  after.num_inputs = g.num_inputs + count;
  return after;
}

int stored_value(const OpGraph& g, const Node& c) {
  const Node* v = &c;
  // Every view on the way keeps the element count and reads a contiguous fp32 value in row-major order.
  while (is_view_op(*v) && contiguous_fp32(*v) && !v->args.empty() && v->args[0].ref) {
    const Node& src = g.node(*v->args[0].ref);
    if (!contiguous_fp32(src) ||
        product(src.type->shape, 0, src.type->shape.size()) != product(v->type->shape, 0, v->type->shape.size()))
      break;
    v = &src;
  }
  return v->id;
}

namespace {

// A product the skinny kernel took (its file is the tiled template's, which is no chain step) chosen again as a
// chain's step: the library GEMM where that takes it (level 2's second nn.Linear with an epilogue, a Linear after a
// prologue).
std::shared_ptr<const MatchedPlan> as_chain_step(const std::shared_ptr<const MatchedPlan>& seed) {
  const auto* gemm = dynamic_cast<const TypedPlan<GemmPlan>*>(seed.get());
  if (!gemm || gemm->plan().kernel != GemmKernel::skinny) return seed;
  GemmPlan plan = gemm->plan();
  choose_gemm_kernel(plan, GemmRole::chain_step);
  if (seed->route() == kGemmEpilogueRoute.name) return matched_plan<kGemmEpilogueRoute>(std::move(plan));
  if (seed->route() == kGemmRoute.name) return matched_plan<kGemmRoute>(std::move(plan));
  return seed;
}

// The table's plan for `g` when the chain can run it as a step.
Result<std::shared_ptr<const MatchedPlan>> chainable(const OpGraph& g, SecondSeedMatcher second) {
  auto seed = second(g);
  if (!seed) return seed;
  seed = as_chain_step(*seed);
  if (std::string why = then_step_refusal(**seed); !why.empty()) return Error{why};
  return seed;
}

// steps_for's search within `max_steps`: the latest cut first. `extra_reads`: whether the rest after a cut may read
// more than the value at the cut and leaves other than forward input 0 (cut_reads). `keep`: values before g's output
// that a later step reads again, so that the steps must end at each (store it) -- cuts there, not one seed over it.
std::optional<std::vector<ThenStep>> steps_within(const OpGraph& g, SecondSeedMatcher second, int max_steps,
                                                  const ChainStart& start, bool extra_reads,
                                                  const std::set<int>& keep = {}) {
  auto output = single_output(g);
  if (!output || !(*output)->type) return std::nullopt;
  const std::vector<int64_t> out_shape = (*output)->type->shape;
  const int out_id = (*output)->id;
  if (keep.empty())
    if (auto whole = chainable(g, second))
      return std::vector<ThenStep>{{.seed = *whole,
                                    .shape = out_shape,
                                    .bytes = 0,
                                    .extra_reads = start.extras,
                                    .previous = start.input0,
                                    .stored = out_id,
                                    .read = out_id}};
  if (max_steps < 2) return std::nullopt;
  const std::vector<int> reach = reachable(g);
  for (auto it = reach.rbegin(); it != reach.rend(); ++it) {
    const Node& c = g.node(*it);
    if (is_leaf(c.op.op()) || c.id == out_id || !c.type || c.type->dtype != "float32") continue;
    const std::vector<int> across = reads_across(g, reach, c);
    if (!across.empty() && !extra_reads) continue;
    const std::optional<CutReads> cut = cut_reads(g, across);
    if (!cut) continue;
    // A view at the cut is how the next seed reads the stored value; the steps before store the value viewed.
    const Node& stored = g.node(stored_value(g, c));
    if (is_leaf(stored.op.op())) continue;  // views of y (or of a parameter): nothing to compute before them
    // What the steps before must store: what the rest reads again, and what g must keep that comes before c (a
    // value after it would be inside the one seed after the cut).
    std::set<int> keep_before(cut->stored_by_before.begin(), cut->stored_by_before.end());
    bool kept = true;
    for (int id : keep)
      if (id != stored.id && id != c.id) {
        kept = kept && id < c.id;
        keep_before.insert(id);
      }
    keep_before.erase(stored.id);
    keep_before.erase(c.id);
    if (!kept) continue;
    auto last = chainable(graph_after(g, c.id, cut->nodes), second);
    if (!last) continue;
    OpGraph before = g;
    before.outputs = {Operand{.ref = stored.id}};
    auto steps = steps_within(before, second, max_steps - 1, start, extra_reads, keep_before);
    if (!steps) continue;
    steps->back().bytes = result_bytes(stored.type->shape);  // an intermediate now, not the output
    if (stored.id != c.id) steps->back().read_shape = c.type->shape;
    steps->back().stored = stored.id;
    steps->back().read = c.id;
    // A computed value the rest reads again must be one the steps before store: nothing else stays in the workspace.
    if (!stored_by(*steps, cut->stored_by_before)) continue;
    std::vector<ExtraRead> reads = start.extras;
    reads.insert(reads.end(), cut->reads.begin(), cut->reads.end());
    steps->push_back({.seed = *last,
                      .shape = out_shape,
                      .bytes = 0,
                      .extra_reads = std::move(reads),
                      .previous = c.id,
                      .stored = out_id,
                      .read = out_id});
    return steps;
  }
  return std::nullopt;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// A pointwise or broadcast step's chain as the store epilogue of the seed before it, or why it is none: the
// previous result (its forward input 0) must be read element for element -- not broadcast -- so that output
// element e is the chain of the previous seed's element e; its other tensors keep their own indexing.
Result<StoreEpilogue> as_store_epilogue(const MatchedPlan& step) {
  StoreEpilogue ep;
  if (const auto* pw = dynamic_cast<const TypedPlan<PointwisePlan>*>(&step)) {
    const PointwisePlan& p = pw->plan();
    if (p.dtype != "float32") return Error{"a half-precision pointwise step"};
    ep.shape = p.shape;
    for (std::size_t k = 0; k < p.tensor_inputs.size(); ++k) {
      const std::string value = fmt::format("x{}", k);
      if (p.tensor_inputs[k] == 0)
        ep.value_names.push_back(value);
      else
        ep.operands.push_back({.input = p.tensor_inputs[k],
                               .name = p.tensor_names[k],
                               .value = value,
                               .size = product(p.shape, 0, p.shape.size()),
                               .strides = row_major_strides(p.shape)});
    }
    ep.scalars = p.scalars;
    ep.steps = p.steps;
    ep.result = p.result;
    ep.description = pointwise_description(p);
    ep.pattern = pointwise_pattern(p);
  } else if (const auto* bc = dynamic_cast<const TypedPlan<BroadcastPlan>*>(&step)) {
    const BroadcastPlan& p = bc->plan();
    ep.shape = p.shape;
    const int64_t numel = product(p.shape, 0, p.shape.size());
    for (std::size_t k = 0; k < p.inputs.size(); ++k) {
      const std::string value = fmt::format("x{}", k);
      if (p.inputs[k] == 0) {
        if (p.sizes[k] != numel || epilogue_offset(p.shape, p.strides[k], "e") != "e")
          return Error{"the step broadcasts the previous result"};
        ep.value_names.push_back(value);
      } else {
        ep.operands.push_back(
            {.input = p.inputs[k], .name = p.names[k], .value = value, .size = p.sizes[k], .strides = p.strides[k]});
      }
    }
    ep.steps = p.steps;
    ep.result = p.result;
    ep.description = broadcast_description(p);
    ep.pattern = broadcast_pattern(p);
  } else {
    return Error{"not a pointwise step"};
  }
  if (ep.value_names.empty()) return Error{"the step does not read the previous result"};
  return ep;
}

// `seed` with `epilogue` folded into its store, or nullptr where its store takes none. The templates of the norm,
// the pooling, the reduction (of a float32 result) and the softmax write each element once, in a store the
// epilogue wraps. Not the library kernels (the channel RMSNorm, reduce_dim, the ticket and cluster softmax): their
// files are read as they are, so such a step stays a kernel of its own. Nor the other routes: a product or a
// convolution takes its pointwise tail in its own epilogue (the head, conv_epilogue, gemm_epilogue), and the other
// seeds are no steps before a pointwise one on level 2.
std::shared_ptr<const MatchedPlan> with_store_epilogue(const MatchedPlan& seed, StoreEpilogue epilogue) {
  if (const auto* norm = dynamic_cast<const TypedPlan<NormPlan>*>(&seed);
      norm && norm->plan().kernel == NormKernel::norm_template && !norm->plan().epilogue) {
    NormPlan plan = norm->plan();
    plan.epilogue = std::move(epilogue);
    return matched_plan<kNormRoute>(std::move(plan));
  }
  if (const auto* pool = dynamic_cast<const TypedPlan<PoolPlan>*>(&seed); pool && !pool->plan().epilogue) {
    PoolPlan plan = pool->plan();
    plan.epilogue = std::move(epilogue);
    return matched_plan<kPoolRoute>(std::move(plan));
  }
  if (const auto* reduce = dynamic_cast<const TypedPlan<ReducePlan>*>(&seed);
      reduce && reduce->plan().kernel == ReduceKernel::reduce_template && reduce->plan().out_dtype == "float32" &&
      !reduce->plan().epilogue) {
    ReducePlan plan = reduce->plan();
    plan.epilogue = std::move(epilogue);
    return matched_plan<kReduceRoute>(std::move(plan));
  }
  if (const auto* softmax = dynamic_cast<const TypedPlan<RowSoftmaxPlan>*>(&seed);
      softmax &&
      (softmax->plan().kernel == SoftmaxKernel::row_template ||
       softmax->plan().kernel == SoftmaxKernel::strided_template) &&
      !softmax->plan().epilogue) {
    RowSoftmaxPlan plan = softmax->plan();
    plan.epilogue = std::move(epilogue);
    return matched_plan<kRowSoftmaxRoute>(std::move(plan));
  }
  return nullptr;
}

}  // namespace

namespace {

bool same_reads(const std::vector<ExtraRead>& a, const std::vector<ExtraRead>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const ExtraRead& x, const ExtraRead& y) { return x.node == y.node; });
}

// The folded step's operands renumbered as inputs of the seed before it, whose extra reads differ: an operand that
// is one of the problem's parameters or buffers moves by the difference in extra reads; one that is an extra read
// becomes the seed's own input holding that value (the same extra read, or its forward input 0). False where the
// seed reads no such input.
bool renumber_operands(StoreEpilogue& ep, const ThenStep& seed, const ThenStep& step, int num_forward) {
  if (num_forward < 1) return false;
  const int own = static_cast<int>(seed.extra_reads.size()), theirs = static_cast<int>(step.extra_reads.size());
  auto renumber = [&](int& input) {
    if (input < num_forward) return true;  // forward inputs 1..: the problem's own, at the same position
    if (input >= num_forward + theirs) {   // parameters and buffers
      input += own - theirs;
      return true;
    }
    const int node = step.extra_reads[static_cast<std::size_t>(input - num_forward)].node;
    for (int k = 0; k < own; ++k)
      if (seed.extra_reads[static_cast<std::size_t>(k)].node == node) {
        input = num_forward + k;
        return true;
      }
    if (node < 0 || node != seed.previous) return false;
    input = 0;
    return true;
  };
  for (EpilogueOperand& o : ep.operands)
    if (!renumber(o.input)) return false;
  for (ScalarOperand& s : ep.scalars)
    if (!renumber(s.index)) return false;
  return true;
}

// Whether a step after `at` reads the value steps[at - 1] writes again: folding `at` into it would lose that value.
bool read_later(const std::vector<ThenStep>& steps, std::size_t at) {
  const ThenStep& value = steps[at - 1];
  for (std::size_t k = at + 1; k < steps.size(); ++k)
    for (const ExtraRead& r : steps[k].extra_reads)
      if (r.node >= 0 && (r.node == value.stored || r.node == value.read)) return true;
  return false;
}

}  // namespace

void fold_pointwise_steps(std::vector<ThenStep>& steps, const ChainStart& start) {
  for (std::size_t i = 1; i < steps.size();) {
    std::shared_ptr<const MatchedPlan> folded;
    if (auto epilogue = as_store_epilogue(*steps[i].seed);
        epilogue &&
        product(epilogue->shape, 0, epilogue->shape.size()) ==
            product(steps[i - 1].shape, 0, steps[i - 1].shape.size()) &&
        !read_later(steps, i) &&
        (same_reads(steps[i - 1].extra_reads, steps[i].extra_reads) ||
         renumber_operands(*epilogue, steps[i - 1], steps[i], start.num_forward)))
      folded = with_store_epilogue(*steps[i - 1].seed, std::move(*epilogue));
    if (!folded) {
      ++i;
      continue;
    }
    // The seed before now writes what the pointwise step wrote, where it wrote it (an intermediate, or the output).
    steps[i - 1] = ThenStep{.seed = std::move(folded),
                            .shape = steps[i].shape,
                            .bytes = steps[i].bytes,
                            .read_shape = steps[i].read_shape,
                            .extra_reads = std::move(steps[i - 1].extra_reads),
                            .previous = steps[i - 1].previous,
                            .stored = steps[i].stored,
                            .read = steps[i].read};
    steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

std::optional<std::vector<ThenStep>> steps_for(const OpGraph& g, SecondSeedMatcher second, int max_steps,
                                               const ChainStart& start, const std::set<int>& keep) {
  // The fewest steps first: each costs a store and a read of its result, so a route that takes two ops at once
  // (a mean of a hardtanh) beats a cut between them. Then each pointwise step goes into the store before it.
  // Extra reads only where no chain without them is found: they cost reads of their own, and a graph that chained
  // without them keeps its chain.
  for (const bool extra_reads : {false, true})
    for (int steps = extra_reads ? 2 : 1; steps <= max_steps; ++steps)  // one step reads g whole either way
      if (auto found = steps_within(g, second, steps, start, extra_reads, keep)) {
        fold_pointwise_steps(*found, start);
        return found;
      }
  return std::nullopt;
}

std::string no_steps_reason(const OpGraph& g, SecondSeedMatcher second, int max_steps) {
  auto whole = second(g);
  if (!whole) return whole.error().message;
  // A chain is refused as one step only to be cut into its parts: when none are found, there were too many.
  if (std::string why = then_step_refusal(**whole); !why.empty() && !is_chain(**whole)) return why;
  return fmt::format("more than {} steps", max_steps);
}

Result<SeedText> split_prelude(const std::string& text, std::string_view route, std::string_view seed_file) {
  std::size_t end = 0;  // just after the last #include line
  for (std::size_t at = 0; at < text.size();) {
    std::size_t next = text.find('\n', at);
    next = next == std::string::npos ? text.size() : next + 1;
    if (std::string_view(text).substr(at, next - at).starts_with("#include")) end = next;
    at = next;
  }
  for (std::size_t at = 0; at < end;) {
    const std::size_t next = text.find('\n', at) + 1;
    const std::string_view line = std::string_view(text).substr(at, next - at);
    if (!(line == "\n" || line.starts_with("//") || line.starts_with("#")))
      return Error{fmt::format("the {} route's kernel has code before its last #include (`{}`), which {} keeps out of "
                               "the namespace it puts the kernel in",
                               route, line.substr(0, line.size() - 1), seed_file)};
    at = next;
  }
  return SeedText{.prelude = text.substr(0, end), .body = text.substr(end)};
}

StaticEntries make_entries_static(std::string& text, const std::string& prefix) {
  StaticEntries e;
  auto rename = [&](std::string_view from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) return false;
    text.replace(at, from.size(), to);
    return true;
  };
  e.forward_ws = rename("extern \"C\" int cutegen_forward_ws(", "static int " + prefix + "forward_ws(");
  e.forward = rename("extern \"C\" int cutegen_forward(", "static int " + prefix + "forward(");
  e.workspace_bytes =
      rename("extern \"C\" size_t cutegen_workspace_bytes(", "static size_t " + prefix + "workspace_bytes(");
  // A call of its own entry points inside the part (a size check in its forward_ws) must stay the part's: in the
  // chained file the contract's names are the chain's (KernelBench level 2's 44 asked the chain's whole workspace).
  auto rename_calls = [&](const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  if (e.workspace_bytes) rename_calls("cutegen_workspace_bytes(", prefix + "workspace_bytes(");
  if (e.forward_ws) rename_calls("cutegen_forward_ws(", prefix + "forward_ws(");
  if (e.forward) rename_calls("cutegen_forward(", prefix + "forward(");
  return e;
}

std::string then_step_lines(const std::vector<ThenStep>& steps) {
  std::string lines;
  for (std::size_t i = 0; i < steps.size(); ++i)
    lines += fmt::format("//   step {}: {}\n", i + 1, steps[i].seed->pattern());
  return lines;
}

Result<ThenHead> then_head_of(const ThenStep& first, const CommentText& problem, std::string_view seed_file) {
  auto text = first.seed->emit(problem);
  if (!text) return text.error();
  auto placed = place_part(std::move(*text), first.seed->route(), "seed_head", "head_", "head_", seed_file);
  if (!placed) return placed.error();
  const std::string& call = placed->call;
  ThenHead head{.kernel = std::move(placed->text),
                .what = fmt::format("part 1: {} -> y", first.seed->route()),
                .shape = first.shape,
                .read_shape = first.read_shape,
                .bytes = first.bytes,
                .file_scope = placed->file_scope};
  // A seed without a workspace gets a placeholder part of 256 bytes, as a step does: the walk stays uniform.
  head.size_call = placed->entries.forward_ws ? call + "workspace_bytes(inputs, kNumInputs, &out, 1)" : "size_t{1}";
  head.forward_call = placed->entries.forward_ws
                          ? call + "forward_ws(inputs, kNumInputs, &out, 1, base + used, part, stream)"
                          : call + "forward(inputs, kNumInputs, &out, 1, stream)";
  return head;
}

namespace {

// How the chain passes an extra read: the problem's input, or the chain value's intermediate as stored or viewed.
Result<std::string> extra_read_value(const ExtraRead& r, const ChainLayout& layout,
                                     const std::vector<std::string>& read_as) {
  if (r.input >= 0) return fmt::format("inputs[{}]", r.input);
  if (r.value < 0 || static_cast<std::size_t>(r.value) >= layout.offsets.size())
    return Error{fmt::format("an extra read of node {} is not resolved to an input or a chain value", r.node)};
  return fmt::format("intermediate(query ? nullptr : base + kOffset{0}, {1})", r.value,
                     r.viewed ? read_as[static_cast<std::size_t>(r.value)] : fmt::format("kShape{}", r.value));
}

// What an extra read is, for the file's comments: "the problem's forward input 0", "y, the convolution's result".
std::string extra_read_text(const ExtraRead& r, const std::string& head_noun) {
  if (r.input == 0) return "the problem's forward input 0";
  if (r.input > 0) return fmt::format("the problem's input {}", r.input);
  return r.value == 0 ? fmt::format("y, the {}'s result", head_noun) : fmt::format("step {}'s result", r.value);
}

// The step's kernel comment on what it reads besides the previous result: a line per value.
std::string extra_reads_lines(const ThenStep& step, const ThenFile& file) {
  std::string lines;
  for (std::size_t k = 0; k < step.extra_reads.size(); ++k)
    lines += fmt::format("//   its forward input {}: {}\n", file.num_forward_inputs + static_cast<int>(k),
                         extra_read_text(step.extra_reads[k], file.head_noun));
  return lines;
}

// The chain's StepInputs, for the steps that read the previous result and the problem's inputs, and StepInputsWith,
// for those that read more (its text only where a step does, so that a chain without extra reads is as it was).
std::string step_inputs_text(const ThenFile& file, const std::vector<ThenStep>& steps) {
  const bool plain = std::any_of(steps.begin(), steps.end(), [](const ThenStep& s) { return s.extra_reads.empty(); });
  const bool extra = has_extra_reads(steps);
  std::string text;
  if (plain && !extra)
    text = fmt::format(
        "// A next seed's inputs: the problem's, with the previous result in place of forward input 0 (which only the\n"
        "// {} reads).\n",
        file.head_noun);
  else if (plain)
    text = "// A next seed's inputs: the problem's, with the previous result in place of forward input 0.\n";
  if (plain)
    text += "struct StepInputs {\n"
            "  cutegen_tensor t[kNumInputs];\n"
            "  StepInputs(const cutegen_tensor* inputs, const cutegen_tensor& previous) {\n"
            "    for (int i = 0; i < kNumInputs; ++i) t[i] = inputs[i];\n"
            "    t[0] = previous;\n"
            "  }\n"
            "};\n";
  if (!extra) return text;
  if (plain) text += "\n";
  return text + fmt::format(
      "// The inputs of a next seed that reads more than the previous result and the problem's inputs, in its graph's\n"
      "// order: the previous result, the problem's forward inputs after the first, the kExtra values it reads\n"
      "// besides (the problem's forward input 0, an earlier result of the chain: docs/seed.md), then the\n"
      "// problem's parameters and buffers. An earlier result stays where it is in the workspace: no part writes\n"
      "// over it.\n"
      "constexpr int kNumForward = {};  // the problem's forward() arguments\n"
      "template <int kExtra>\n"
      "struct StepInputsWith {{\n"
      "  static constexpr int kCount = kNumInputs + kExtra;\n"
      "  cutegen_tensor t[kCount];\n"
      "  StepInputsWith(const cutegen_tensor* inputs, const cutegen_tensor& previous,\n"
      "                 const cutegen_tensor (&extra)[kExtra]) {{\n"
      "    t[0] = previous;\n"
      "    for (int i = 1; i < kNumForward; ++i) t[i] = inputs[i];\n"
      "    for (int k = 0; k < kExtra; ++k) t[kNumForward + k] = extra[k];\n"
      "    for (int i = kNumForward; i < kNumInputs; ++i) t[kExtra + i] = inputs[i];\n"
      "  }}\n"
      "}};\n",
      file.num_forward_inputs);
}

}  // namespace

Result<std::string> emit_then_file(const ThenFile& file, const ThenHead& head, const std::vector<ThenStep>& steps,
                                   const CommentText& problem) {
  std::string step_kernels, shapes, chain;
  // The intermediates: y (kShape0) at 0, step i's result (kShape<i>) after it; kView<i> where the next part
  // reads one through a view.
  const ChainLayout layout = chain_layout(head.bytes, steps);
  if (std::string why = overwritten_value(layout, steps); !why.empty())
    return Error{fmt::format("the chain's workspace layout would lose a value: {} ({})", why, file.seed_file)};
  int64_t at = head.bytes;
  shapes += fmt::format("constexpr int64_t kShape0[] = {{{}}};  // y\n", fmt::join(head.shape, ", "));
  shapes += "constexpr size_t kOffset0 = 0;\n";
  auto view_line = [](std::size_t i, const std::vector<int64_t>& read_shape) {
    return fmt::format("constexpr int64_t kView{}[] = {{{}}};  // the same values as step {} reads them\n", i,
                       fmt::join(read_shape, ", "), i + 1);
  };
  std::vector<std::string> read_as{head.read_shape.empty() ? "kShape0" : "kView0"};
  if (!head.read_shape.empty()) shapes += view_line(0, head.read_shape);
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    shapes += fmt::format("constexpr int64_t kShape{}[] = {{{}}};  // step {}'s result\n", i + 1,
                          fmt::join(steps[i].shape, ", "), i + 1);
    shapes += fmt::format("constexpr size_t kOffset{} = {};\n", i + 1, at);
    if (!steps[i].read_shape.empty()) shapes += view_line(i + 1, steps[i].read_shape);
    read_as.push_back(fmt::format("k{}{}", steps[i].read_shape.empty() ? "Shape" : "View", i + 1));
    at += steps[i].bytes;
  }
  std::set<std::string> defined;  // the macros the file defines so far: the head's, then each step's
  bool file_scope_taken = head.file_scope;  // a part at the file's scope (not in a namespace of its own): one at most
  for (const std::string& name : defined_macros(head.kernel)) defined.insert(name);
  if (file.shared_scratch)
    chain += "  size_t scratch = 0;  // the largest part's workspace: each part's starts after the intermediates\n";
  chain += step_code(head.what,
                     "    const cutegen_tensor out = intermediate(query ? nullptr : base + kOffset0, kShape0);\n",
                     head.size_call, head.forward_call, file.shared_scratch);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ThenStep& step = steps[i];
    const bool last = i + 1 == steps.size();
    const std::string ns = fmt::format("seed_step{}", i + 1);
    auto text = step.seed->emit(problem);
    if (!text) return text.error();
    rename_shared_macros(*text, static_cast<int>(i + 1), defined);
    auto placed = place_part(std::move(*text), step.seed->route(), ns, "second_", fmt::format("step{}_", i + 1),
                             file.seed_file);
    if (!placed) return placed.error();
    if (placed->file_scope && file_scope_taken)
      return Error{fmt::format("two parts of the chain (the {} route's, step {}, and one before it) include headers "
                               "after their code and need the file's scope, which holds one ({})",
                               step.seed->route(), i + 1, file.seed_file)};
    file_scope_taken = file_scope_taken || placed->file_scope;
    const StaticEntries& entries = placed->entries;
    step_kernels += fmt::format(
        "// ---------------------------------------------------------------------------------------------------------\n"
        "// Step {0}: the {1} route's seed, reading the previous result as its forward input 0{2}{3}\n{4}{5}",
        i + 1, step.seed->route(),
        placed->file_scope ? " (at the file's scope: it includes headers after its code)" : "",
        step.extra_reads.empty() ? "." : ", and besides:", extra_reads_lines(step, file), placed->text);
    const std::string in = fmt::format("in{}", i + 1);
    const std::string previous = fmt::format("intermediate(query ? nullptr : base + kOffset{}, {})", i, read_as[i]);
    std::string out_decl;
    std::string count = "kNumInputs";
    if (step.extra_reads.empty()) {
      out_decl = fmt::format("    const StepInputs {}(inputs, {});\n", in, previous);
    } else {
      std::vector<std::string> values, what;
      for (const ExtraRead& r : step.extra_reads) {
        auto value = extra_read_value(r, layout, read_as);
        if (!value) return value.error();
        values.push_back(*value);
        what.push_back(extra_read_text(r, file.head_noun));
      }
      out_decl = fmt::format("    // read besides the previous result: {5}\n"
                             "    const cutegen_tensor extra{0}[] = {{{1}}};\n"
                             "    const StepInputsWith<{2}> {3}(inputs, {4}, extra{0});\n",
                             i + 1, fmt::join(values, ", "), values.size(), in, previous, fmt::join(what, "; "));
      count = in + ".kCount";
    }
    std::string out = "outputs";
    if (!last) {
      out_decl += fmt::format(
          "    const cutegen_tensor out = intermediate(query ? nullptr : base + kOffset{0}, kShape{0});\n", i + 1);
      out = "&out";
    }
    const std::string num_out = last ? "num_outputs" : "1";
    const std::string& call = placed->call;
    const std::string size_call =
        entries.forward_ws ? fmt::format("{}workspace_bytes({}.t, {}, {}, {})", call, in, count, out, num_out)
                           : std::string("size_t{1}");  // none: a placeholder part of 256 bytes keeps the walk uniform
    const std::string forward_call =
        entries.forward_ws
            ? fmt::format("{}forward_ws({}.t, {}, {}, {}, base + used, part, stream)", call, in, count, out, num_out)
            : fmt::format("{}forward({}.t, {}, {}, {}, stream)", call, in, count, out, num_out);
    chain += step_code(fmt::format("step {}: {}", i + 1, step.seed->route()), out_decl, size_call, forward_call,
                       file.shared_scratch);
  }
  if (file.shared_scratch) chain += "  used += scratch;\n";
  if (file.batch_chunk > 0) {
    // The parts become one pass's function, after the shapes it reads; run() calls it once per pass, each on its
    // own images of forward input 0 and of the output, through the same intermediates.
    shapes += fmt::format(
        "\n// The traced batch runs in passes of kBatchChunk images (docs/seed.md: the results of the whole batch\n"
        "// would pass the judge's workspace cap, and every op treats each image on its own): the shapes above are\n"
        "// one pass's.\n"
        "constexpr int64_t kBatch = {0}, kBatchChunk = {1};\n"
        "\n"
        "// Forward input 0 and the output of the pass that starts at image `first`: the same tensors, moved along\n"
        "// their batch dimension (both are fp32: the matcher checked).\n"
        "struct BatchPass {{\n"
        "  cutegen_tensor in[kNumInputs];\n"
        "  cutegen_tensor out;\n"
        "  BatchPass(const cutegen_tensor* inputs, const cutegen_tensor* outputs, int64_t first) {{\n"
        "    for (int i = 0; i < kNumInputs; ++i) in[i] = inputs[i];\n"
        "    in[0] = images(inputs[0], first);\n"
        "    out = images(outputs[0], first);\n"
        "  }}\n"
        "  static cutegen_tensor images(cutegen_tensor t, int64_t first) {{\n"
        "    if (t.data) t.data = static_cast<char*>(t.data) + first * t.stride[0] * int64_t(sizeof(float));\n"
        "    t.shape[0] = kBatchChunk;\n"
        "    return t;\n"
        "  }}\n"
        "}};\n"
        "\n"
        "// One pass: each part in order, as run() would call them for the whole batch.\n"
        "int run_pass(const cutegen_tensor* inputs, const cutegen_tensor* outputs, int32_t num_outputs, char* base,\n"
        "             bool query, size_t workspace_bytes, size_t& used, cudaStream_t stream) {{\n"
        "  size_t part = 0;\n"
        "{2}"
        "  return CUTEGEN_OK;\n"
        "}}\n",
        file.batch, file.batch_chunk, chain);
    chain =
        "  (void)part;\n"
        "  for (int64_t first = 0; first < kBatch; first += kBatchChunk) {  // one after another on the stream\n"
        "    const BatchPass pass(inputs, outputs, first);\n"
        "    used = kIntermediateBytes;\n"
        "    if (int rc = run_pass(pass.in, &pass.out, num_outputs, base, query, workspace_bytes, used, stream);\n"
        "        rc != CUTEGEN_OK)\n"
        "      return rc;\n"
        "    if (query) break;  // every pass asks the same\n"
        "  }\n";
  }
  std::string text = file.header + kThenChainTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "NAMESPACE", file.chain_namespace);
  replace_placeholder(text, "HEAD_NOUN", file.head_noun);
  replace_placeholder(text, "STEP_INPUTS", step_inputs_text(file, steps));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(file.num_contract_inputs));
  shapes += fmt::format("constexpr int64_t kInputShape[] = {{{}}};  // forward input 0, as traced\n",
                        fmt::join(file.input_shape, ", "));
  shapes += fmt::format("constexpr int64_t kOutputShape[] = {{{}}};  // the output, as traced\n",
                        fmt::join(file.output_shape, ", "));
  replace_placeholder(text, "SHAPES", shapes);
  replace_placeholder(text, "INTERMEDIATE_BYTES", std::to_string(at));
  replace_placeholder(text, "CHAIN", chain);
  // The kernels last: their text is not searched for placeholders. A later part that defines NDEBUG before
  // CUTLASS's headers (the library GEMM's prelude) needs it before the head's headers too: the head includes
  // CuTe first, and CuTe's asserts, compiled in there, reach the GEMM's mainloop through the same headers --
  // ptxas then serialises every wgmma ("wgmma pipeline crossing function boundary": a pointwise head before
  // the library GEMM, SeedCompile.PrologueThenLibraryGemmAfterAnActivationBuilds).
  const bool later_ndebug = step_kernels.find("#define NDEBUG") != std::string::npos;
  replace_placeholder(text, "HEAD_KERNEL",
                      later_ndebug ? "#ifndef NDEBUG\n#define NDEBUG  // a later part's: before every header\n#endif\n" +
                                         head.kernel
                                   : head.kernel);
  replace_placeholder(text, "STEP_KERNELS", step_kernels);
  return text;
}

}  // namespace cutegen::seed
