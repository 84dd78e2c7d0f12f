#include "seed/routes/conv_then/conv_then_route.h"

#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/library_text.h"
#include "seed/plan_parts.h"
#include "seed/pointwise_ops.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kConvThenTemplate =
#include "seed/conv_then_kernel.inc"
    ;
// The most seeds after the convolution: each costs its result's store and read.
constexpr int kMaxSteps = 3;
constexpr const char* kConvThenSeedFile = "src/seed/routes/conv_then/conv_then_route.cpp";

bool is_conv_node(const Node& n) { return n.op == Op::conv || n.op == Op::conv_transpose; }

int64_t round_up_to(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// `root` and every op after it that is pointwise, has root's shape and float32, and reads only that set and
// leaves (inputs, parameters, constants): after a convolution, what conv_epilogue fuses into its store.
std::set<int> pointwise_after(const OpGraph& g, const Node& root, const std::vector<int>& reach) {
  std::set<int> head{root.id};
  for (int id : reach) {
    const Node& n = g.node(id);
    if (id <= root.id || !n.known || pointwise_arity(n.op.spelling()) == 0 || !n.type ||
        n.type->shape != root.type->shape || n.type->dtype != "float32")
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

// The second seed's entry points, renamed: `extern "C"` definitions in the text made static functions of
// namespace seed_second. Returns which of the three the text has.
struct SecondEntries {
  bool forward = false, forward_ws = false, workspace_bytes = false;
};
SecondEntries make_entries_static(std::string& text) {
  SecondEntries e;
  auto rename = [&](std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    if (at == std::string::npos) return false;
    text.replace(at, from.size(), to);
    return true;
  };
  e.forward_ws = rename("extern \"C\" int cutegen_forward_ws(", "static int second_forward_ws(");
  e.forward = rename("extern \"C\" int cutegen_forward(", "static int second_forward(");
  e.workspace_bytes = rename("extern \"C\" size_t cutegen_workspace_bytes(", "static size_t second_workspace_bytes(");
  return e;
}

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

// The text's #include lines, moved out (they go before namespace seed_second: a header first included
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


int64_t result_bytes(const std::vector<int64_t>& shape) { return round_up_to(product(shape, 0, shape.size()) * 4, 256); }

// Whether `c` splits `g`: every op after it reads nothing before it but `c` itself and leaves -- and not
// forward input 0 either, whose position carries c's value in the graph after the cut.
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

// The steps that compute `g` (forward input 0 the previous result): one route's seed for the whole, or a cut
// -- the latest that works -- with the steps before it and one seed after it, at most `max_steps` in all.
// nullopt: none.
std::optional<std::vector<ConvThenStep>> steps_for(const OpGraph& g, SecondSeedMatcher second, int max_steps) {
  auto output = single_output(g);
  if (!output || !(*output)->type) return std::nullopt;
  const std::vector<int64_t> out_shape = (*output)->type->shape;
  if (auto whole = second(g)) return std::vector<ConvThenStep>{{.seed = *whole, .shape = out_shape, .bytes = 0}};
  if (max_steps < 2) return std::nullopt;
  const std::vector<int> reach = reachable(g);
  for (auto it = reach.rbegin(); it != reach.rend(); ++it) {
    const Node& c = g.node(*it);
    if (is_leaf(c.op.op()) || c.id == (*output)->id || !c.type || c.type->dtype != "float32") continue;
    if (!is_cut(g, reach, c)) continue;
    auto last = second(graph_after(g, c.id));
    if (!last) continue;
    OpGraph before = g;
    before.outputs = {Operand{.ref = c.id}};
    auto steps = steps_for(before, second, max_steps - 1);
    if (!steps) continue;
    steps->back().bytes = result_bytes(c.type->shape);  // an intermediate now, not the output
    steps->push_back({.seed = *last, .shape = out_shape, .bytes = 0});
    return steps;
  }
  return std::nullopt;
}

}  // namespace

OpGraph graph_after(const OpGraph& g, int split) {
  OpGraph after = g;
  Node& y = after.nodes[static_cast<std::size_t>(split)];
  const TensorType type = *g.node(split).type;
  y.op = Op::input;
  y.name = "y";
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

Result<ConvThenPlan> match_conv_then(const OpGraph& g, SecondSeedMatcher second) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node& out = **output;
  const std::vector<int> reach = reachable(g);
  std::vector<int> convolutions;
  for (int id : reach)
    if (is_conv_node(g.node(id))) convolutions.push_back(id);
  if (convolutions.size() != 1) {  // conv_epilogue's reason says how many
    auto epilogue = match_conv_epilogue(g);
    return epilogue ? Error{"not one convolution"} : epilogue.error();
  }
  const Node& conv = g.node(convolutions[0]);
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
  // The next seeds read y where forward input 0 was; only the convolution may read that input.
  if (g.num_inputs < 1 || plan.head.x_input != 0)
    return Error{"the convolution does not read forward input 0 (the next seed reads the convolution's result in "
                 "its place)"};
  const OpGraph after = graph_after(g, split);
  for (int id : reachable(after)) {
    const Node& n = after.node(id);
    if (id != split && n.op == Op::input && (n.index == 0 || n.scalar))
      return Error{fmt::format("the ops after the convolution read forward input {} too (the next seed reads only "
                               "the convolution's result, parameters and other inputs)",
                               contract_name(g, n))};
  }
  // One seed for the rest, or up to three, split where the rest reads one value (instance_norm, then a
  // division; a GroupNorm, then a mean).
  auto whole = second(after);
  auto steps = whole ? std::optional<std::vector<ConvThenStep>>(std::vector<ConvThenStep>{
                           {.seed = *whole, .shape = plan.output_shape, .bytes = 0}})
                     : steps_for(after, second, kMaxSteps);
  if (!steps) return Error{fmt::format("after the convolution: {}", whole.error().message)};
  plan.steps = std::move(*steps);
  int64_t intermediates = plan.head_bytes;
  for (const auto& s : plan.steps) intermediates += s.bytes;
  constexpr int64_t kConvolutionShare = int64_t{64} << 20;  // the library convolution's tap table and split weights
  if (intermediates > kWorkspaceCeiling - kConvolutionShare)
    return Error{fmt::format("the convolution's and the steps' results ({} bytes) do not fit the judge's workspace "
                             "cap ({} bytes) with the convolution's tables",
                             intermediates, kWorkspaceCeiling)};
  return plan;
}

std::string conv_then_description(const ConvThenPlan& plan) {
  std::vector<std::string> steps;
  for (const auto& s : plan.steps) steps.push_back(s.seed->description());
  return fmt::format("convolution, then {}: y = {}", fmt::join(steps, ", then "), plan.head_pattern);
}

std::string conv_then_pattern(const ConvThenPlan& plan) {
  std::vector<std::string> steps;
  for (const auto& s : plan.steps) steps.push_back(s.seed->pattern());
  return fmt::format("library conv_implicit_gemm, then {}; y = {}", fmt::join(steps, ", then "), plan.head_pattern);
}

namespace {

// The chain's code for one step (conv_then::run): build its output descriptor, ask its workspace, call it.
std::string step_code(const std::string& what, const std::string& in, const std::string& out_decl,
                      const std::string& out, const std::string& size_call, const std::string& forward_call) {
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
      "    used += part;\n"
      "  }}\n",
      fmt::arg("what", what), fmt::arg("out_decl", out_decl), fmt::arg("size_call", size_call),
      fmt::arg("forward_call", forward_call), fmt::arg("in", in), fmt::arg("out", out));
}

}  // namespace

Result<std::string> emit_conv_then(const ConvThenPlan& plan, const CommentText& problem) {
  auto head = conv_library_text(plan.head);
  if (!head) return head.error();
  if (auto s = replace_library_lines(
          *head,
          {{"extern \"C\" size_t cutegen_workspace_bytes(", "static size_t conv_workspace_bytes("},
           {"extern \"C\" int cutegen_forward_ws(", "static int conv_forward_ws("}},
          "examples/kernels/conv_implicit_gemm.cu", kConvThenSeedFile);
      !s)
    return s.error();
  std::string step_lines, step_kernels, shapes, chain;
  // The intermediates: y (kShape0) at 0, step i's result (kShape<i>) after it.
  std::vector<int64_t> offsets{0};
  int64_t at = plan.head_bytes;
  shapes += fmt::format("constexpr int64_t kShape0[] = {{{}}};  // y\n", fmt::join(plan.head_shape, ", "));
  shapes += "constexpr size_t kOffset0 = 0;\n";
  for (std::size_t i = 0; i + 1 < plan.steps.size(); ++i) {
    shapes += fmt::format("constexpr int64_t kShape{}[] = {{{}}};  // step {}'s result\n", i + 1,
                          fmt::join(plan.steps[i].shape, ", "), i + 1);
    shapes += fmt::format("constexpr size_t kOffset{} = {};\n", i + 1, at);
    at += plan.steps[i].bytes;
  }
  std::set<std::string> defined;  // the macros the file defines so far: the library convolution's, then each step's
  for (const std::string& name : defined_macros(*head)) defined.insert(name);
  chain += step_code("the convolution -> y", "inputs",
                     "    const cutegen_tensor out = intermediate(query ? nullptr : base + kOffset0, kShape0);\n", "&out",
                     "conv_workspace_bytes(inputs, kNumInputs, &out, 1)",
                     "conv_forward_ws(inputs, kNumInputs, &out, 1, base + used, part, stream)");
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const ConvThenStep& step = plan.steps[i];
    const bool last = i + 1 == plan.steps.size();
    const std::string ns = fmt::format("seed_step{}", i + 1);
    auto text = step.seed->emit(problem);
    if (!text) return text.error();
    const SecondEntries entries = make_entries_static(*text);
    if (entries.forward == entries.forward_ws || entries.forward_ws != entries.workspace_bytes ||
        text->find("extern \"C\"") != std::string::npos)
      return Error{fmt::format("the {} route's kernel does not have exactly one entry point of the contract "
                               "(cutegen_forward, or cutegen_forward_ws with cutegen_workspace_bytes) as {} expects",
                               step.seed->route(), kConvThenSeedFile)};
    rename_shared_macros(*text, static_cast<int>(i + 1), defined);
    const std::string includes = take_includes(*text);
    step_lines += fmt::format("//   step {}: {}\n", i + 1, step.seed->pattern());
    step_kernels += fmt::format(
        "// ---------------------------------------------------------------------------------------------------------\n"
        "// Step {0}: the {1} route's seed, reading the previous result as its forward input 0.\n{2}namespace {3} {{\n"
        "{4}}}  // namespace {3}\n",
        i + 1, step.seed->route(), includes, ns, *text);
    const std::string in = fmt::format("in{}", i + 1);
    std::string out_decl = fmt::format(
        "    const StepInputs {0}(inputs, intermediate(query ? nullptr : base + kOffset{1}, kShape{1}));\n", in, i);
    std::string out = "outputs";
    if (!last) {
      out_decl += fmt::format("    const cutegen_tensor out = intermediate(query ? nullptr : base + kOffset{0}, kShape{0});\n",
                              i + 1);
      out = "&out";
    }
    const std::string num_out = last ? "num_outputs" : "1";
    const std::string size_call =
        entries.forward_ws
            ? fmt::format("{}::second_workspace_bytes({}.t, kNumInputs, {}, {})", ns, in, out, num_out)
            : std::string("size_t{1}");  // none: a placeholder part of 256 bytes keeps the walk uniform
    const std::string forward_call =
        entries.forward_ws
            ? fmt::format("{}::second_forward_ws({}.t, kNumInputs, {}, {}, base + used, part, stream)", ns, in, out, num_out)
            : fmt::format("{}::second_forward({}.t, kNumInputs, {}, {}, stream)", ns, in, out, num_out);
    chain += step_code(fmt::format("step {}: {}", i + 1, step.seed->route()), in, out_decl, out, size_call, forward_call);
  }
  std::string text = kConvThenTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "STEP_COUNT", std::to_string(plan.steps.size()));
  replace_placeholder(text, "HEAD_PATTERN", plan.head_pattern);
  replace_placeholder(text, "HEAD_SHAPE", shape_text(plan.head_shape));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  shapes += fmt::format("constexpr int64_t kInputShape[] = {{{}}};  // forward input 0, as traced\n",
                        fmt::join(plan.input_shape, ", "));
  shapes += fmt::format("constexpr int64_t kOutputShape[] = {{{}}};  // the output, as traced\n",
                        fmt::join(plan.output_shape, ", "));
  replace_placeholder(text, "SHAPES", shapes);
  replace_placeholder(text, "INTERMEDIATE_BYTES", std::to_string(at));
  replace_placeholder(text, "CHAIN", chain);
  replace_placeholder(text, "STEP_LINES", step_lines);
  // The kernels last: their text is not searched for placeholders.
  replace_placeholder(text, "HEAD_KERNEL", *head);
  replace_placeholder(text, "STEP_KERNELS", step_kernels);
  return text;
}

}  // namespace cutegen::seed
