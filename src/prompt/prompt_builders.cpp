#include "prompt/prompt_builders.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "prompt/menu_items.h"
#include "prompt/problem_source.h"
#include "prompt/torch_defaults.h"

namespace cutegen {
namespace {

// Placeholders per prompt. Blocks (`*_block`) arrive fenced by the builder, because the fence must be
// longer than any backtick run inside the code it wraps.
const std::map<PromptKind, std::vector<std::string>>& placeholder_table() {
  static const std::map<PromptKind, std::vector<std::string>> table = {
      {PromptKind::synthesis, {"problem_name", "example"}},
      {PromptKind::diagnose,
       {"problem_name", "failure_kind", "verdict", "failure_reason", "evidence_block", "verdict_meaning",
        "situation", "attempts", "failure_reference", "numbered_kernel_block"}},
      {PromptKind::repair,
       {"problem_name", "failure_kind", "verdict", "failure_reason", "evidence_block", "diagnosis", "attempts",
        "failure_reference", "kernel_heading", "kernel_block"}},
      {PromptKind::optimize,
       {"problem_name", "step", "max_steps", "performance", "history", "profile", "menu_item", "kernel_block"}},
      {PromptKind::restart, {"problem_name", "why", "failure_history", "last_failure", "example"}},
  };
  return table;
}

const std::map<std::string, std::vector<std::string>, std::less<>>& shared_table() {
  static const std::map<std::string, std::vector<std::string>, std::less<>> table = {
      {"rules", {"arch", "precision_rule", "shapes_rule", "fresh_inputs_rule"}},
      {"system",
       {"rules", "references", "problem_name", "workload_class", "gpu", "reference_block", "tensor_table",
        "cost_summary"}},
      {"example", {"example_file", "example_why", "example_block"}},
      {"candidate", {"candidate", "candidates", "item", "item_text", "siblings"}},
  };
  return table;
}

// A Markdown fenced block whose fence is longer than any backtick run in `code`.
std::string fenced(std::string_view code, std::string_view language) {
  std::size_t longest = 0, run = 0;
  for (char c : code) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string body(code);
  if (!body.empty() && body.back() != '\n') body += '\n';
  return fmt::format("{}{}\n{}{}", fence, language, body, fence);
}

std::string ms(double v) { return fmt::format("{:.4g} ms", v); }

std::string bytes_text(uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= 1e9) return fmt::format("{:.3g} GB", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.3g} MB", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.3g} kB", v / 1e3);
  return fmt::format("{} bytes", b);
}

std::string flops_text(uint64_t f) {
  const double v = static_cast<double>(f);
  if (v >= 1e12) return fmt::format("{:.3g} TFLOP", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.3g} GFLOP", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.3g} MFLOP", v / 1e6);
  return fmt::format("{} FLOP", f);
}

std::string or_unknown(const std::string& s, std::string_view unknown = "unknown") {
  return s.empty() ? std::string(unknown) : s;
}

// What `cutegen prompt` shows where a run would put a measurement: labelled, so nobody mistakes it
// for a number, and bracketed, so nobody mistakes it for the prompt's own words.
std::string gpu_placeholder(std::string_view what) { return fmt::format("[measured on the GPU at run time: {}]", what); }

Result<std::string> render(const PromptLibrary& lib, PromptKind kind, const PromptValues& values) {
  return lib.prompt(kind).render(values);
}

std::string evidence_block(const FailureEvidence& f, const PromptOptions& o) {
  const std::string text = f.details.empty() ? "(the judge gave no further evidence)" : f.details;
  return fenced(clip_evidence(text, o.max_evidence_lines, o.max_evidence_chars), "text");
}

// The library kernel for this problem (prompts/example.md), or the line that says none is shown.
Result<std::string> example_section(const PromptLibrary& lib, const ProblemBrief& p, const PromptOptions& o) {
  if (!o.show_example)
    return std::string("No library kernel is shown in this run (--examples none): design the kernel from the "
                       "problem, the rules and the CuTe guide.");
  const ExampleChoice choice = choose_example(example_facts(p));
  const ExampleKernel& example = lib.example(choice.file);
  return lib.example_intro().render(
      {{"example_file", example.file}, {"example_why", choice.why}, {"example_block", fenced(example.source, "cuda")}});
}

std::string problem_name(const ProblemBrief& p) { return or_unknown(p.name, "(unnamed)"); }

// The least precise floating dtype of the problem (example_facts derives it when the brief has none).
std::string problem_dtype(const ProblemBrief& p) { return example_facts(p).dtype; }

std::string sci(double v) { return fmt::format("{:.0e}", v); }

}  // namespace

// ---- pieces -----------------------------------------------------------------------------------------

std::string number_lines(std::string_view source) {
  // As wide as the last number and no wider: the listing goes to the diagnosis and to the repair, and a
  // fixed 5-digit column cost ~5 bytes a line in both.
  std::size_t lines = static_cast<std::size_t>(std::count(source.begin(), source.end(), '\n'));
  if (!source.empty() && source.back() != '\n') ++lines;
  const std::size_t width = std::to_string(std::max<std::size_t>(lines, 1)).size();
  std::string out;
  int n = 0;
  for (std::size_t pos = 0; pos < source.size();) {
    std::size_t nl = source.find('\n', pos);
    std::string_view line = source.substr(pos, (nl == std::string_view::npos ? source.size() : nl) - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out += fmt::format("{:>{}} | {}\n", ++n, width, line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

bool cites_line_numbers(std::string_view text) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool word_start = i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]));
    if (!word_start) continue;
    // "line 24", "lines 30-41", "Line:24"
    if (i + 4 <= text.size() && lower(text[i]) == 'l' && lower(text[i + 1]) == 'i' && lower(text[i + 2]) == 'n' &&
        lower(text[i + 3]) == 'e') {
      std::size_t j = i + 4;
      if (j < text.size() && lower(text[j]) == 's') ++j;
      while (j < text.size() && (text[j] == ' ' || text[j] == ':')) ++j;
      if (j < text.size() && digit(text[j])) return true;
    }
    // "L24", "kernel.cu:24"
    if (text[i] == 'L' && i + 1 < text.size() && digit(text[i + 1])) return true;
  }
  return text.find(".cu:") != std::string_view::npos;
}

ExampleFacts example_facts(const ProblemBrief& p) {
  ExampleFacts f{p.workload, p.aten_ops, p.dtype, p.precision};
  if (f.dtype.empty()) {
    // Least precise first: one 16-bit tensor makes it a 16-bit problem.
    for (std::string_view d : {"float16", "bfloat16", "float32", "float64"}) {
      auto has = [&](const TensorBrief& t) { return t.dtype == d; };
      if (std::any_of(p.inputs.begin(), p.inputs.end(), has) || std::any_of(p.outputs.begin(), p.outputs.end(), has)) {
        f.dtype = d;
        break;
      }
    }
  }
  return f;
}

std::string format_shape(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "()";
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

std::string format_tensor_table(const ProblemBrief& p) {
  std::string out = "| argument | name | role | shape | dtype |\n|---|---|---|---|---|\n";
  auto row = [&](const std::string& where, const TensorBrief& t) {
    std::string shape = t.role == TensorRole::host_scalar ? fmt::format("scalar = {}", or_unknown(t.value))
                                                          : format_shape(t.shape);
    out += fmt::format("| {} | {} | {} | {} | {} |\n", where, t.name.empty() ? "-" : t.name, to_string(t.role), shape,
                       or_unknown(t.dtype));
  };
  for (std::size_t i = 0; i < p.inputs.size(); ++i) row(fmt::format("inputs[{}]", i), p.inputs[i]);
  for (std::size_t i = 0; i < p.outputs.size(); ++i) row(fmt::format("outputs[{}]", i), p.outputs[i]);
  out += fmt::format("\nnum_inputs = {}, num_outputs = {}.\n{}", p.inputs.size(), p.outputs.size(),
                     format_construction(p));
  return out;
}

std::string format_construction(const ProblemBrief& p) {
  auto value_text = [](const ValueFacts& v) {
    if (v.kind == ValueFacts::Kind::tensor)
      return fmt::format("<{} tensor of shape {}>", or_unknown(v.dtype), format_shape(v.shape));
    return or_unknown(v.value, "?");
  };
  std::string passed, bound, defaults;
  for (const ValueFacts& v : p.init_inputs) {
    std::string arg = v.name.empty() ? value_text(v) : fmt::format("{}={}", v.name, value_text(v));
    if (v.is_default) {
      defaults += (defaults.empty() ? "" : ", ") + arg;
    } else {
      passed += (passed.empty() ? "" : ", ") + value_text(v);
      bound += (bound.empty() ? "" : ", ") + arg;
    }
  }
  std::string out = passed.empty() ? "get_init_inputs(): [] (Model() takes no arguments)."
                                   : fmt::format("get_init_inputs(): [{}], so the model is Model({}).", passed, bound);
  if (!defaults.empty())
    out += fmt::format("\nModel.__init__ keeps its own defaults for what get_init_inputs() does not pass: {}.", defaults);
  // Defaults of PyTorch's own modules and functions that the reference relies on without writing them.
  std::string implied, last_call;
  for (const auto& d : implied_defaults(p.reference_source)) {
    if (d.call != last_call) implied += fmt::format("{}{}: ", implied.empty() ? "" : "; ", d.call);
    else implied += ", ";
    implied += fmt::format("{}={}", d.param, d.value);
    last_call = d.call;
  }
  if (!implied.empty())
    out += fmt::format("\nPyTorch defaults the reference relies on without writing them (the kernel must match "
                       "them): {}.",
                       implied);
  return out;
}

std::string format_work_summary(const ProblemBrief& p) {
  if (!p.min_bytes && !p.flops) return "- Bytes and FLOPs: not estimated for this problem.";
  std::string out = fmt::format("- Minimum memory traffic: {} (every input read once, every output written once).\n",
                                bytes_text(p.min_bytes));
  out += fmt::format("- Work: {}", flops_text(p.flops));
  if (p.min_bytes) out += fmt::format(" ({:.3g} FLOP per byte)", static_cast<double>(p.flops) / p.min_bytes);
  return out + ".";
}

std::string format_cost_summary(const ProblemBrief& p, const PromptOptions& o) {
  std::string out = format_work_summary(p) + "\n";
  if (p.floor_ms) {
    out += fmt::format("- Roofline floor on this GPU: {}{}. No kernel can be faster; SOL% = floor / time.\n",
                       ms(*p.floor_ms), p.floor_bound.empty() ? "" : fmt::format(" ({}-bound)", p.floor_bound));
  } else if (o.gpu_placeholders) {
    out += fmt::format("- Roofline floor on this GPU: {}. No kernel can be faster; SOL% = floor / time.\n",
                       gpu_placeholder("the roofline floor from the calibrated GPU"));
  } else {
    out += "- Roofline floor: not available (the GPU has not been calibrated).\n";
  }
  auto baseline = [&](const std::optional<double>& v, std::string_view what) {
    if (v) return ms(*v);
    return o.gpu_placeholders ? gpu_placeholder(what) : std::string("not measured");
  };
  out += fmt::format("- PyTorch eager: {}; torch.compile: {}.", baseline(p.eager_ms, "eager PyTorch's median time"),
                     baseline(p.compile_ms, "torch.compile's median time"));
  return out;
}

PrecisionTolerance precision_tolerance(Precision precision, std::string_view dtype) {
  // python/cutegen_worker/compare.py: _HALF_PROBLEMS (whatever the policy), then POLICIES. A test
  // reads that file and holds these numbers to it.
  if (dtype == "float16") return {1e-2, 1e-2, 2e-3};
  if (dtype == "bfloat16") return {2e-2, 2e-2, 2e-2};
  switch (precision) {
    case Precision::tf32: return {1e-3, 1e-3, 2e-3};
    case Precision::bf16: return {1e-2, 1e-2, 2e-2};
    case Precision::strict: break;
  }
  return {1e-4, 1e-4, 1e-6};
}

bool has_matrix_products(WorkloadClass c) { return c != WorkloadClass::elementwise && c != WorkloadClass::reduction; }

std::string format_precision_rule(Precision precision, std::string_view dtype, bool matrix_products) {
  const bool half = dtype == "float16" || dtype == "bfloat16";
  const PrecisionTolerance t = precision_tolerance(precision, dtype);
  const std::string policy = precision == Precision::strict ? "strict"
                             : precision == Precision::tf32 ? "tf32 (the user opted in)"
                                                            : "bf16 (the user opted in)";
  const std::string computing = half ? fmt::format("{}", dtype) : "float32 with TF32 off";
  std::string out = fmt::format(
      "## Precision: {}\n"
      "Each output is compared with a {} reference on the same inputs, against PyTorch's own error there "
      "(PyTorch computing in {}). An element fails when |out - ref| > {} * max|ref| + {} * |ref| + {:g} x "
      "PyTorch's largest element error (max|ref| over the whole output); the output fails when its relative L2 "
      "error ||out - ref|| / ||ref|| exceeds max({}, {:g} x PyTorch's). NaN or Inf where the reference is finite "
      "always fails; integer and bool outputs must match exactly.\n",
      policy, half ? "float32" : "float64", computing, sci(t.atol), sci(t.rtol), kTorchErrorFactor,
      sci(t.rel_l2_floor), kTorchErrorFactor);
  if (half) {
    out += fmt::format("The problem's data is {}: arithmetic in {} with fp32 accumulation of sums and dot products "
                       "is what these bounds are set for; these bounds hold whatever --precision says.",
                       dtype, dtype);
  } else if (!matrix_products) {
    // What the tensor-core policies allow concerns matrix products; an elementwise or reduction
    // problem has none, and its prompts carry no MMA material either (guide_for_class).
    out += "fp32 arithmetic passes in any order of summation; fp16 or bf16 arithmetic on fp32 data fails";
    out += precision == Precision::strict ? "." : " (this policy's bounds are for matrix products, which this problem has none of).";
  } else if (precision == Precision::tf32) {
    out += "fp32 matrix products may use TF32 tensor-core MMAs (operands rounded to TF32) with fp32 accumulation; "
           "the bounds above are set for that. Everything else is computed in fp32; fp16 or bf16 arithmetic on fp32 "
           "data is not part of this policy.";
  } else if (precision == Precision::bf16) {
    out += "fp32 matrix products may round their operands to bf16 (or fp16, or TF32) for tensor-core MMAs with fp32 "
           "accumulation; the bounds above are set for that. Everything else is computed in fp32.";
  } else {
    out += "fp32 FMA on CUDA cores passes in any order of summation, and so do tensor cores with a 3xTF32 split "
           "(each fp32 operand a TF32 high part plus a TF32 remainder; three MMAs lo*hi, hi*lo, hi*hi accumulated in "
           "fp32). Plain TF32 (one MMA on rounded operands) is 70 to 1000 times less accurate than fp32 and fails, on "
           "positive inputs too, as do fp16 or bf16 arithmetic on fp32 data.";
  }
  out += " Accumulate sums and dot products in fp32 or wider. Fast intrinsics (`__expf`, `__fdividef`, `rsqrtf`, "
         "...) are fine only where their error stays within these bounds over the whole input range.";
  return out;
}

std::string clip_evidence(std::string_view text, std::size_t max_lines, std::size_t max_chars) {
  std::string out;
  std::size_t lines = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    if (lines == max_lines || out.size() + (end - pos) > max_chars) break;
    out.append(text.substr(pos, end - pos));
    ++lines;
    pos = end;
  }
  if (pos < text.size()) {
    std::size_t rest = static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(pos), text.end(), '\n'));
    if (text.back() != '\n') ++rest;
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += fmt::format("[... {} more line{} left out]\n", rest, rest == 1 ? "" : "s");
  }
  return out;
}

// ---- builders ---------------------------------------------------------------------------------------

Result<std::string> system_references(const PromptLibrary& lib, WorkloadClass workload, PromptKind kind) {
  switch (kind) {
    case PromptKind::synthesis:
    case PromptKind::restart: return lib.cute_guide(workload);
    case PromptKind::diagnose: return debug_guide_lead(lib.debug_guide());
    case PromptKind::repair: return std::string();  // the failure's own reference is in the request
    case PromptKind::optimize: return optimize_menu_index(lib.menu(workload));
  }
  return Error{"internal: unknown prompt kind"};
}

std::string optimize_menu_index(std::string_view menu) {
  Menu parsed = parse_menu(menu);
  // Said before the item lines, so the LLM knows where the rest of each item is.
  parsed.intro += "\nOne line per item: when it helps, the profile signals for it. Each request shows one item in "
                  "full, the one its step comes to in this order.\n";
  return menu_index(parsed);
}

std::string menu_item_in_full(std::string_view menu, int step) {
  const Menu parsed = parse_menu(menu);
  std::vector<std::string> names;
  for (const MenuItem& it : parsed.items) names.push_back(it.name);
  const auto walk = items_for_step(names, step, 1);
  const MenuItem* item = walk.empty() ? nullptr : find_item(parsed, walk.front());
  if (!item) return "(the menu has no numbered items)";
  std::string text = item->shown;
  while (!text.empty() && text.back() == '\n') text.pop_back();  // the template puts the blank line after it
  return text;
}

namespace {
// [begin, end) of a guide's `## ` section by its heading line: from the heading to the next `## ` heading (or the
// end), or npos twice when the guide has no such heading at the start of a line.
std::pair<std::size_t, std::size_t> guide_section(std::string_view guide, std::string_view heading) {
  const std::size_t at = guide.find(heading);
  if (at == std::string_view::npos || (at > 0 && guide[at - 1] != '\n')) return {std::string_view::npos, std::string_view::npos};
  const std::size_t end = guide.find("\n## ", at + heading.size());
  return {at, end == std::string_view::npos ? guide.size() : end + 1};
}
}  // namespace

Result<std::string> compile_errors_section(std::string_view guide) {
  constexpr std::string_view kHeading = "## Common compile errors";
  auto [begin, end] = guide_section(guide, kHeading);
  if (begin == std::string_view::npos)
    return Error{fmt::format("the CuTe guide has no section '{}' (the diagnose and repair prompts show it)", kHeading)};
  return std::string(guide.substr(begin + 1, end - begin - 1));  // "# Common compile errors": a section of its own here
}

namespace {
constexpr std::string_view kVerdictSection = "## What each verdict usually means\n";

std::pair<std::size_t, std::size_t> debug_verdict_section(std::string_view guide) {
  return guide_section(guide, kVerdictSection);
}

bool verdict_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

std::string verdict_meaning(std::string_view guide, std::string_view verdict) {
  auto [begin, end] = debug_verdict_section(guide);
  if (begin == std::string_view::npos || verdict.empty()) return "";
  const std::string_view section = guide.substr(begin, end - begin);
  for (std::size_t item = section.find("\n- **"); item != std::string_view::npos;
       item = section.find("\n- **", item + 1)) {
    const std::size_t bold = item + 5, close = section.find("**", bold);
    if (close == std::string_view::npos) break;
    const std::string_view names = section.substr(bold, close - bold);
    bool named = false;
    for (std::size_t at = names.find(verdict); at != std::string_view::npos && !named; at = names.find(verdict, at + 1)) {
      const std::size_t after = at + verdict.size();
      named = (at == 0 || !verdict_word_char(names[at - 1])) && (after == names.size() || !verdict_word_char(names[after]));
    }
    if (!named) continue;
    // The item runs to the next item or the end of the section; its continuation lines lose the
    // indent that put them under the dash.
    std::size_t next = section.find("\n- ", item + 1);
    std::string_view text = section.substr(item + 3, (next == std::string_view::npos ? section.size() : next) - item - 3);
    std::string out;
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t nl = text.find('\n', pos);
      std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl + 1) - pos);
      if (pos > 0 && line.substr(0, 2) == "  ") line.remove_prefix(2);
      out.append(line);
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }
  return "";
}

std::string debug_guide_lead(std::string_view guide) {
  auto [begin, end] = debug_verdict_section(guide);
  if (begin == std::string_view::npos) return std::string(guide);
  std::string lead(guide.substr(0, begin));
  while (!lead.empty() && lead.back() == '\n') lead.pop_back();
  return lead;
}

std::string debug_guide_sections(std::string_view guide) {
  auto [begin, end] = debug_verdict_section(guide);
  if (begin == std::string_view::npos) return "";
  std::string rest(guide.substr(end));
  while (!rest.empty() && rest.back() == '\n') rest.pop_back();
  return rest;
}

Result<std::string> failure_reference(const PromptLibrary& lib, WorkloadClass workload, FailureKind kind,
                                      PromptKind for_kind) {
  switch (kind) {
    case FailureKind::compile_error: return compile_errors_section(lib.cute_guide(workload));
    case FailureKind::runtime_error:
    case FailureKind::wrong_result:
      if (for_kind != PromptKind::diagnose) return std::string();
      // "## " sections of the guide, under a top-level heading of their own in the request.
      return "# Debugging a failing kernel, by symptom\n\n" + debug_guide_sections(lib.debug_guide());
    case FailureKind::rejected: return std::string();  // the verdict's item and the rules name the check
  }
  return Error{"internal: unknown failure kind"};
}

std::string format_shapes_rule(int other_shapes) {
  std::string rule = "- Handle the real shapes, partial tiles included (predicate them). ";
  if (other_shapes > 0)
    rule += fmt::format(
        "A kernel that passes (in a step: beats the best) is then run at {} other size{} of the problem that `get_inputs()` sets (a batch, a "
        "length: smaller odd ones, a larger batch{}): wrong results or a crash there fail it (`shape_specific`).",
        other_shapes, other_shapes == 1 ? "" : "s", other_shapes >= 3 ? ", batch 1" : "");
  else
    rule += "This run judges the kernel at the problem's own shape only, which a user's model will not keep.";
  return rule +
         " Read every size from the descriptors; `CUTEGEN_ERROR_UNSUPPORTED` is for shapes you do not handle, "
         "never the problem's own.";
}

std::string format_fresh_inputs_rule(const ProblemBrief& p) {
  auto any = [&](auto&& pred) { return std::any_of(p.inputs.begin(), p.inputs.end(), pred); };
  const bool parameters =
      any([](const TensorBrief& t) { return t.role == TensorRole::parameter || t.role == TensorRole::buffer; });
  const bool integers = any([](const TensorBrief& t) {
    return t.role != TensorRole::host_scalar && (t.dtype.rfind("int", 0) == 0 || t.dtype.rfind("uint", 0) == 0);
  });
  std::string rule = parameters
                         ? "- Inputs and parameters (weights, biases, norm scales, buffers) are drawn afresh for every "
                           "call, also signed and scaled by 100: right only on `torch.rand` data in [0, 1) or on a "
                           "LayerNorm's initial weight 1 / bias 0 fails."
                         : "- Inputs are drawn afresh for every call, also signed and scaled by 100: right only on "
                           "`torch.rand` data in [0, 1) fails.";
  if (integers)
    rule += " Integer inputs built the same way every time (an `arange`, a fixed permutation) get a fresh "
            "permutation of their values each call.";
  return rule + " The time reported is the slower of the problem's own inputs and signed inputs.";
}

Result<std::string> build_system_prompt(const PromptLibrary& lib, const ProblemBrief& p, PromptKind kind,
                                        const PromptOptions& o) {
  auto rendered = lib.rules().render({{"arch", or_unknown(p.arch, "the GPU's architecture")},
                                      {"precision_rule", format_precision_rule(p.precision, problem_dtype(p),
                                                                                has_matrix_products(p.workload))},
                                      {"shapes_rule", format_shapes_rule(p.other_shapes)},
                                      {"fresh_inputs_rule", format_fresh_inputs_rule(p)}});
  if (!rendered) return rendered.error();
  auto rules = rules_for_kind(*rendered, kind, lib.rules().origin());
  if (!rules) return rules.error();
  auto references = system_references(lib, p.workload, kind);
  if (!references) return references.error();
  std::string gpu = p.gpu.empty() && o.gpu_placeholders ? gpu_placeholder("the GPU's name") : or_unknown(p.gpu);
  std::string rules_text = *rules;  // the template puts the blank line after it
  while (!rules_text.empty() && rules_text.back() == '\n') rules_text.pop_back();
  std::string refs = *references;
  while (!refs.empty() && refs.back() == '\n') refs.pop_back();
  if (!refs.empty()) refs += "\n\n";
  return lib.system().render({{"rules", rules_text},
                              {"references", refs},
                              {"problem_name", problem_name(p)},
                              {"workload_class", std::string(to_string(p.workload))},
                              {"gpu", gpu},
                              {"reference_block", fenced(problem_source_for_prompt(p.reference_source), "python")},
                              {"tensor_table", format_tensor_table(p)},
                              {"cost_summary", format_cost_summary(p, o)}});
}

Result<std::string> build_synthesis_prompt(const PromptLibrary& lib, const SynthesisInput& in, const PromptOptions& o) {
  auto example = example_section(lib, in.problem, o);
  if (!example) return example.error();
  return render(lib, PromptKind::synthesis, {{"problem_name", problem_name(in.problem)}, {"example", *example}});
}

namespace {
// failure_reference as a block for the request: followed by a blank line, or nothing.
Result<std::string> failure_reference_block(const PromptLibrary& lib, const ProblemBrief& p, FailureKind kind,
                                            PromptKind for_kind) {
  auto text = failure_reference(lib, p.workload, kind, for_kind);
  if (!text || text->empty()) return text;
  while (!text->empty() && text->back() == '\n') text->pop_back();
  return *text + "\n\n";
}
}  // namespace

Result<std::string> build_diagnose_prompt(const PromptLibrary& lib, const DiagnoseInput& in, const PromptOptions& o) {
  auto reference = failure_reference_block(lib, in.problem, in.failure.kind, PromptKind::diagnose);
  if (!reference) return reference.error();
  std::string situation = "This kernel has not passed yet; it is being made correct before any optimisation.";
  if (!in.change_under_repair.empty()) {
    situation = fmt::format("This kernel was correct before the last optimisation step, which tried: {}. That step "
                            "broke it.",
                            one_line(in.change_under_repair, 200));
    // The change itself, not only its name: what the step (and any repair since) did to the last
    // correct kernel is where the cause usually is.
    if (!in.change_diff.empty())
      situation += "\nIts changes to the last correct kernel:\n" +
                   fenced(clip_evidence(in.change_diff, o.max_evidence_lines * 2, o.max_evidence_chars), "diff");
  }
  PromptValues v = {{"problem_name", problem_name(in.problem)},
                    {"failure_kind", std::string(to_string(in.failure.kind))},
                    {"verdict", to_string(in.failure.verdict)},
                    {"failure_reason", one_line(or_unknown(in.failure.reason, "(no reason given)"), 400)},
                    {"evidence_block", evidence_block(in.failure, o)},
                    {"verdict_meaning", [&] {
                       const std::string meaning = verdict_meaning(lib.debug_guide(), to_string(in.failure.verdict));
                       return meaning.empty() ? std::string() : "What this verdict usually means:\n" + meaning + "\n";
                     }()},
                    {"situation", situation},
                    {"attempts", format_history(in.attempts, o.history, "None: this is the first diagnosis of this failure.")},
                    {"failure_reference", *reference},
                    {"numbered_kernel_block", fenced(number_lines(in.kernel), "text")}};
  return render(lib, PromptKind::diagnose, v);
}

Result<std::string> build_repair_prompt(const PromptLibrary& lib, const RepairInput& in, const PromptOptions& o) {
  // The diagnosis was written against the numbered listing; when it cites lines, the repair prompt
  // shows the same numbers (the edits still quote the lines without them, as the rules say).
  const bool numbered = cites_line_numbers(in.diagnosis);
  auto reference = failure_reference_block(lib, in.problem, in.failure.kind, PromptKind::repair);
  if (!reference) return reference.error();
  PromptValues v = {
      {"problem_name", problem_name(in.problem)},
      {"failure_kind", std::string(to_string(in.failure.kind))},
      {"verdict", to_string(in.failure.verdict)},
      {"failure_reason", one_line(or_unknown(in.failure.reason, "(no reason given)"), 400)},
      {"evidence_block", evidence_block(in.failure, o)},
      {"diagnosis", or_unknown(in.diagnosis, "(no diagnosis)")},
      {"attempts", format_history(in.attempts, o.history, "None: this is the first repair of this failure.")},
      {"failure_reference", *reference},
      {"kernel_heading", numbered ? "The current kernel (numbered as the diagnosis cites it; the numbers are not part "
                                    "of the file and SEARCH never quotes them)"
                                  : "The current kernel"},
      {"kernel_block", numbered ? fenced(number_lines(in.kernel), "text") : fenced(in.kernel, "cuda")}};
  return render(lib, PromptKind::repair, v);
}

Result<std::string> build_optimize_prompt(const PromptLibrary& lib, const OptimizeInput& in, const PromptOptions& o) {
  const ProblemBrief& p = in.problem;
  const bool timed = in.best_ms > 0;
  std::string perf = fmt::format(
      "- Current best kernel (below): {}",
      timed ? ms(in.best_ms) : o.gpu_placeholders ? gpu_placeholder("its median time") : std::string("not timed"));
  if (p.floor_ms && timed) {
    perf += fmt::format(", {:.1f}% of speed-of-light (the roofline floor above)", 100.0 * *p.floor_ms / in.best_ms);
  } else if (o.gpu_placeholders) {
    perf += ", " + gpu_placeholder("its % of speed-of-light");
  } else if (!p.floor_ms) {
    perf += "; no roofline floor (the GPU has not been calibrated)";
  }
  perf += ".\n";
  auto versus = [&](const char* name, const std::optional<double>& base) {
    if (base && timed)
      return fmt::format("- Against {}: the best kernel is {:.2f}x {}.\n", name,
                         *base >= in.best_ms ? *base / in.best_ms : in.best_ms / *base,
                         *base >= in.best_ms ? "faster" : "slower");
    if (o.gpu_placeholders) return fmt::format("- Against {}: {}.\n", name, gpu_placeholder("the speedup"));
    return fmt::format("- Against {}: not measured.\n", name);
  };
  perf += versus("PyTorch eager", p.eager_ms);
  perf += versus("torch.compile", p.compile_ms);
  for (const auto& note : in.compiler_notes)
    perf += fmt::format("- ptxas, building the best kernel: {} (a cost with no error: for an assert in the "
                        "mainloop, `#define NDEBUG` before every #include)\n", note);
  perf.pop_back();
  std::string profile =
      in.profile_summary.empty()
          ? "Not shown yet: profiles are withheld until the kernel's structure is settled. Choose from the menu "
            "by the kernel's structure and the history."
          : fenced(in.profile_summary, "text");
  PromptValues v = {{"problem_name", problem_name(p)},
                    {"step", std::to_string(in.step)},
                    {"max_steps", in.max_steps > 0 ? std::to_string(in.max_steps) : std::string("?")},
                    {"performance", perf},
                    {"history", format_history(in.history, o.history, "No optimisation steps yet: this is the first.")},
                    {"profile", profile},
                    {"menu_item", menu_item_in_full(lib.menu(p.workload), in.step)},
                    {"kernel_block", fenced(in.kernel, "cuda")}};
  return render(lib, PromptKind::optimize, v);
}

Result<std::string> build_restart_prompt(const PromptLibrary& lib, const RestartInput& in, const PromptOptions& o) {
  std::string last = "None recorded.";
  if (in.last_failure) {
    last = fmt::format("{} ({}): {}\n{}", to_string(in.last_failure->kind), to_string(in.last_failure->verdict),
                       one_line(in.last_failure->reason, 400), evidence_block(*in.last_failure, o));
  }
  auto example = example_section(lib, in.problem, o);
  if (!example) return example.error();
  return render(lib, PromptKind::restart,
                {{"problem_name", problem_name(in.problem)},
                 {"why", one_line(or_unknown(in.why, "the previous attempts did not converge"), 400)},
                 {"failure_history", format_history(in.failures, o.history, "No attempts recorded.")},
                 {"last_failure", last},
                 {"example", *example}});
}

Result<std::string> build_candidate_share(const PromptLibrary& lib, const CandidateShareInput& in) {
  std::string siblings;
  for (std::size_t i = 0; i < in.siblings.size(); ++i)
    siblings += (i == 0 ? "" : i + 1 == in.siblings.size() ? " and " : ", ") + fmt::format("**{}**", in.siblings[i]);
  auto text = lib.candidate_share().render({{"candidate", std::to_string(in.candidate)},
                                            {"candidates", std::to_string(in.candidates)},
                                            {"item", in.item},
                                            {"item_text", in.item_text.empty() ? std::string("(its full text is in this "
                                                                                             "step's request above)")
                                                                               : in.item_text},
                                            {"siblings", siblings.empty() ? "no other item" : siblings}});
  if (!text) return text;
  // A block of its own: the loop puts it after the optimize prompt, a blank line between.
  text->erase(0, text->find_first_not_of('\n'));
  return text;
}

// ---- checks -----------------------------------------------------------------------------------------

const std::vector<std::string>& prompt_placeholders(PromptKind kind) { return placeholder_table().at(kind); }
const std::vector<std::string>& shared_placeholders(std::string_view name) { return shared_table().find(name)->second; }

namespace {

Status check_template(const PromptTemplate& t, const std::vector<std::string>& wanted, std::string_view what) {
  std::set<std::string> want(wanted.begin(), wanted.end());
  std::set<std::string> have(t.placeholders().begin(), t.placeholders().end());
  std::string missing, extra;
  for (const std::string& n : want)
    if (!have.count(n)) missing += fmt::format(" {{{{{}}}}}", n);
  for (const std::string& n : have)
    if (!want.count(n)) extra += fmt::format(" {{{{{}}}}}", n);
  if (missing.empty() && extra.empty()) return ok_status();
  return Error{fmt::format("prompt template {} does not match cutegen {}:{}{}{}{}", t.origin(), what,
                           missing.empty() ? "" : " it never uses", missing,
                           extra.empty() ? "" : (missing.empty() ? " it uses" : "; it uses"),
                           extra.empty() ? "" : extra + " which cutegen does not fill")};
}

}  // namespace

Status check_prompt_library(const PromptLibrary& lib) {
  for (PromptKind k : kAllPromptKinds)
    if (auto s = check_template(lib.prompt(k), prompt_placeholders(k), to_string(k)); !s.ok()) return s;
  for (auto [t, name] : {std::pair{&lib.rules(), "rules"}, std::pair{&lib.system(), "system"},
                         std::pair{&lib.example_intro(), "example"}, std::pair{&lib.candidate_share(), "candidate"}})
    if (auto s = check_template(*t, shared_placeholders(name), name); !s.ok()) return s;
  // The rules' kind markers and the guide's compile-error section, checked now rather than at the
  // first request of the kind that needs them.
  PromptValues any;
  for (const std::string& name : shared_placeholders("rules")) any[name] = "";
  auto rules = lib.rules().render(any);
  if (!rules) return rules.error();
  for (PromptKind k : kAllPromptKinds)
    if (auto r = rules_for_kind(*rules, k, lib.rules().origin()); !r) return r.error();
  for (WorkloadClass c : all_workload_classes())
    if (auto e = compile_errors_section(lib.cute_guide(c)); !e) return e.error();
  return ok_status();
}

Result<PromptLibrary> load_prompt_library() {
  auto paths = locate_prompt_paths();
  if (!paths.ok()) return paths.error();
  auto lib = PromptLibrary::load(*paths);
  if (!lib.ok()) return lib.error();
  if (auto s = check_prompt_library(*lib); !s.ok()) return s.error();
  return lib;
}

}  // namespace cutegen
