#include "seed/routes/then/then_chain.h"

#include <algorithm>
#include <regex>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/plan_parts.h"
#include "seed/routes/gemm/gemm_plan.h"
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
    if (defined.count(name))
      text = std::regex_replace(text, std::regex("\\b" + name + "\\b"), fmt::format("S{}_{}", step, name));
  for (const std::string& name : defined_macros(text)) defined.insert(name);
}

// The text's #include lines, moved out (they go before namespace seed_step<i>: a header first included
// inside a namespace would declare everything there).
std::string take_includes(std::string& text) {
  std::string includes, rest;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + at, end - at);
    (line.starts_with("#include") ? includes : rest).append(line);
    at = end;
  }
  text = std::move(rest);
  return includes;
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

}  // namespace

std::string then_step_refusal(const MatchedPlan& seed) {
  if (const auto* gemm = dynamic_cast<const TypedPlan<GemmPlan>*>(&seed);
      gemm && (gemm->plan().kernel == GemmKernel::tiled || gemm->plan().kernel == GemmKernel::split_k))
    return fmt::format("the product after the first is not on the library GEMM ({}): a chain's products are the "
                       "library's 3xTF32 GEMM or a GEMV",
                       gemm->plan().kernel_reason);
  return "";
}

int64_t round_up_to(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

int64_t result_bytes(const std::vector<int64_t>& shape) {
  return round_up_to(product(shape, 0, shape.size()) * 4, 256);
}

OpGraph graph_after(const OpGraph& g, int split) {
  OpGraph after = g;
  Node& y = after.nodes[static_cast<std::size_t>(split)];
  const TensorType type = *g.node(split).type;
  y.op = Op::input;
  // "y", as the descriptions name the previous result, unless another forward input than the one y replaces has
  // that name (KernelBench level 2's 28 reads an input y after the product).
  bool taken = false;
  for (const Node& n : g.nodes) taken = taken || (n.op == Op::input && n.index != 0 && n.name == "y");
  y.name = taken ? "y_prev" : "y";
  y.known = true;
  y.note.clear();
  y.args.clear();
  y.params.clear();
  y.inplace = false;
  y.index = 0;
  y.scalar = false;
  y.type = TensorType{.dtype = "float32", .shape = type.shape, .contiguous = true};
  return after;
}

bool is_cut(const OpGraph& g, const std::vector<int>& reach, const Node& c) {
  for (int id : reach) {
    if (id <= c.id) continue;
    for (const Operand& a : g.node(id).args) {
      if (!a.ref || *a.ref == c.id || *a.ref > c.id) continue;
      const Node& r = g.node(*a.ref);
      if (!is_leaf(r.op.op()) || (r.op == Op::input && r.index == 0)) return false;
    }
  }
  return true;
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

// The table's plan for `g` when the chain can run it as a step.
Result<std::shared_ptr<const MatchedPlan>> chainable(const OpGraph& g, SecondSeedMatcher second) {
  auto seed = second(g);
  if (!seed) return seed;
  if (std::string why = then_step_refusal(**seed); !why.empty()) return Error{why};
  return seed;
}

// steps_for's search within `max_steps`: the latest cut first.
std::optional<std::vector<ThenStep>> steps_within(const OpGraph& g, SecondSeedMatcher second, int max_steps) {
  auto output = single_output(g);
  if (!output || !(*output)->type) return std::nullopt;
  const std::vector<int64_t> out_shape = (*output)->type->shape;
  if (auto whole = chainable(g, second)) return std::vector<ThenStep>{{.seed = *whole, .shape = out_shape, .bytes = 0}};
  if (max_steps < 2) return std::nullopt;
  const std::vector<int> reach = reachable(g);
  for (auto it = reach.rbegin(); it != reach.rend(); ++it) {
    const Node& c = g.node(*it);
    if (is_leaf(c.op.op()) || c.id == (*output)->id || !c.type || c.type->dtype != "float32") continue;
    if (!is_cut(g, reach, c)) continue;
    // A view at the cut is how the next seed reads the stored value; the steps before store the value viewed.
    const Node& stored = g.node(stored_value(g, c));
    if (is_leaf(stored.op.op())) continue;  // views of y (or of a parameter): nothing to compute before them
    auto last = chainable(graph_after(g, c.id), second);
    if (!last) continue;
    OpGraph before = g;
    before.outputs = {Operand{.ref = stored.id}};
    auto steps = steps_within(before, second, max_steps - 1);
    if (!steps) continue;
    steps->back().bytes = result_bytes(stored.type->shape);  // an intermediate now, not the output
    if (stored.id != c.id) steps->back().read_shape = c.type->shape;
    steps->push_back({.seed = *last, .shape = out_shape, .bytes = 0});
    return steps;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<ThenStep>> steps_for(const OpGraph& g, SecondSeedMatcher second, int max_steps) {
  // The fewest steps first: each costs a store and a read of its result, so a route that takes two ops at once
  // (a mean of a hardtanh) beats a cut between them.
  for (int steps = 1; steps <= max_steps; ++steps)
    if (auto found = steps_within(g, second, steps)) return found;
  return std::nullopt;
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
  return e;
}

int64_t judge_workspace_cap(const OpGraph& g) {
  constexpr int64_t kFactor = 8, kFloor = int64_t{16} << 20;
  auto bytes = [](const Node& n) -> int64_t {
    if (!n.type || n.scalar) return 0;
    const std::string& d = n.type->dtype;
    const int64_t size = d == "float64" || d == "int64" ? 8 : d == "float16" || d == "bfloat16" ? 2 : d == "bool" ? 1 : 4;
    return product(n.type->shape, 0, n.type->shape.size()) * size;
  };
  int64_t io = 0;
  for (const Node& n : g.nodes)
    if (n.op == Op::input || n.op == Op::param) io += bytes(n);
  for (const Operand& o : g.outputs)
    if (o.ref) io += bytes(g.node(*o.ref));
  return std::min(kWorkspaceCeiling, std::max(kFloor, kFactor * io));
}

std::string then_step_lines(const std::vector<ThenStep>& steps) {
  std::string lines;
  for (std::size_t i = 0; i < steps.size(); ++i)
    lines += fmt::format("//   step {}: {}\n", i + 1, steps[i].seed->pattern());
  return lines;
}

Result<std::string> emit_then_file(const ThenFile& file, const ThenHead& head, const std::vector<ThenStep>& steps,
                                   const CommentText& problem) {
  std::string step_kernels, shapes, chain;
  // The intermediates: y (kShape0) at 0, step i's result (kShape<i>) after it; kView<i> where the next part
  // reads one through a view.
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
    const StaticEntries entries = make_entries_static(*text, "second_");
    if (entries.forward == entries.forward_ws || entries.forward_ws != entries.workspace_bytes ||
        text->find("extern \"C\"") != std::string::npos)
      return Error{fmt::format("the {} route's kernel does not have exactly one entry point of the contract "
                               "(cutegen_forward, or cutegen_forward_ws with cutegen_workspace_bytes) as {} expects",
                               step.seed->route(), file.seed_file)};
    rename_shared_macros(*text, static_cast<int>(i + 1), defined);
    const std::string includes = take_includes(*text);
    step_kernels += fmt::format(
        "// ---------------------------------------------------------------------------------------------------------\n"
        "// Step {0}: the {1} route's seed, reading the previous result as its forward input 0.\n{2}namespace {3} {{\n"
        "{4}}}  // namespace {3}\n",
        i + 1, step.seed->route(), includes, ns, *text);
    const std::string in = fmt::format("in{}", i + 1);
    std::string out_decl =
        fmt::format("    const StepInputs {0}(inputs, intermediate(query ? nullptr : base + kOffset{1}, {2}));\n", in,
                    i, read_as[i]);
    std::string out = "outputs";
    if (!last) {
      out_decl += fmt::format(
          "    const cutegen_tensor out = intermediate(query ? nullptr : base + kOffset{0}, kShape{0});\n", i + 1);
      out = "&out";
    }
    const std::string num_out = last ? "num_outputs" : "1";
    const std::string size_call =
        entries.forward_ws ? fmt::format("{}::second_workspace_bytes({}.t, kNumInputs, {}, {})", ns, in, out, num_out)
                           : std::string("size_t{1}");  // none: a placeholder part of 256 bytes keeps the walk uniform
    const std::string forward_call =
        entries.forward_ws
            ? fmt::format("{}::second_forward_ws({}.t, kNumInputs, {}, {}, base + used, part, stream)", ns, in, out,
                          num_out)
            : fmt::format("{}::second_forward({}.t, kNumInputs, {}, {}, stream)", ns, in, out, num_out);
    chain += step_code(fmt::format("step {}: {}", i + 1, step.seed->route()), out_decl, size_call, forward_call,
                       file.shared_scratch);
  }
  if (file.shared_scratch) chain += "  used += scratch;\n";
  std::string text = file.header + kThenChainTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "NAMESPACE", file.chain_namespace);
  replace_placeholder(text, "HEAD_NOUN", file.head_noun);
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(file.num_contract_inputs));
  shapes += fmt::format("constexpr int64_t kInputShape[] = {{{}}};  // forward input 0, as traced\n",
                        fmt::join(file.input_shape, ", "));
  shapes += fmt::format("constexpr int64_t kOutputShape[] = {{{}}};  // the output, as traced\n",
                        fmt::join(file.output_shape, ", "));
  replace_placeholder(text, "SHAPES", shapes);
  replace_placeholder(text, "INTERMEDIATE_BYTES", std::to_string(at));
  replace_placeholder(text, "CHAIN", chain);
  // The kernels last: their text is not searched for placeholders.
  replace_placeholder(text, "HEAD_KERNEL", head.kernel);
  replace_placeholder(text, "STEP_KERNELS", step_kernels);
  return text;
}

}  // namespace cutegen::seed
