#include "prompt/prompt_builders.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "prompt/torch_defaults.h"

namespace cutegen {
namespace {

// Placeholders per prompt. Blocks (`*_block`) arrive fenced by the builder, because the fence must be
// longer than any backtick run inside the code it wraps.
const std::map<PromptKind, std::vector<std::string>>& placeholder_table() {
  static const std::map<PromptKind, std::vector<std::string>> table = {
      {PromptKind::synthesis,
       {"rules", "contract", "cute_guide", "problem_name", "workload_class", "gpu", "precision_policy",
        "reference_block", "tensor_table", "cost_summary", "example_file", "example_why", "example_block"}},
      {PromptKind::diagnose,
       {"rules", "guides", "problem_name", "precision_policy", "reference_block", "tensor_table",
        "numbered_kernel_block", "failure_kind", "verdict", "failure_reason", "evidence_block", "situation",
        "attempts"}},
      {PromptKind::repair,
       {"rules", "problem_name", "precision_policy", "reference_block", "tensor_table", "kernel_block",
        "failure_kind", "verdict", "failure_reason", "evidence_block", "diagnosis", "attempts"}},
      {PromptKind::optimize,
       {"rules", "cute_guide", "menu", "workload_class", "problem_name", "gpu", "precision_policy",
        "reference_block", "tensor_table", "cost_summary", "performance", "history", "profile", "kernel_block",
        "step", "max_steps"}},
      {PromptKind::restart,
       {"rules", "contract", "cute_guide", "problem_name", "workload_class", "gpu", "precision_policy",
        "reference_block", "tensor_table", "cost_summary", "example_file", "example_why", "example_block", "why",
        "failure_history", "last_failure"}},
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

Result<std::string> render(const PromptLibrary& lib, PromptKind kind, const PromptValues& values) {
  return lib.prompt(kind).render(values);
}

std::string evidence_block(const FailureEvidence& f, const PromptOptions& o) {
  const std::string text = f.details.empty() ? "(the judge gave no further evidence)" : f.details;
  return fenced(clip_evidence(text, o.max_evidence_lines, o.max_evidence_chars), "text");
}

std::string guides_for(const PromptLibrary& lib, FailureKind kind) {
  // Compile errors in CuTe code are mostly API misuse, which the CuTe guide's error list covers.
  if (kind == FailureKind::compile_error) return lib.debug_guide() + "\n" + lib.cute_guide();
  return lib.debug_guide();
}

// The library kernel for this problem and the prompt values that show it.
PromptValues example_values(const PromptLibrary& lib, const ProblemBrief& p) {
  const ExampleChoice choice = choose_example(example_facts(p));
  const ExampleKernel& example = lib.example(choice.file);
  return {{"example_file", example.file}, {"example_why", choice.why}, {"example_block", fenced(example.source, "cuda")}};
}

constexpr std::string_view kRulesElsewhere =
    "# Rules\nThe rules and answer formats in the system message apply in full.";

// Values most prompts share.
PromptValues problem_values(const PromptLibrary& lib, const ProblemBrief& p, const PromptOptions& o) {
  return {{"problem_name", or_unknown(p.name, "(unnamed)")},
          {"precision_policy", format_precision_policy(p.precision)},
          {"reference_block", fenced(p.reference_source, "python")},
          {"tensor_table", format_tensor_table(p)},
          {"rules", o.rules_in_system_prompt ? std::string(kRulesElsewhere) : lib.rules()}};
}

}  // namespace

// ---- pieces -----------------------------------------------------------------------------------------

std::string number_lines(std::string_view source) {
  std::string out;
  int n = 0;
  for (std::size_t pos = 0; pos < source.size();) {
    std::size_t nl = source.find('\n', pos);
    std::string_view line = source.substr(pos, (nl == std::string_view::npos ? source.size() : nl) - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out += fmt::format("  {:>5} | {}\n", ++n, line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
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

std::string format_cost_summary(const ProblemBrief& p) {
  std::string out = format_work_summary(p) + "\n";
  if (p.floor_ms) {
    out += fmt::format("- Roofline floor on this GPU: {}{}. No kernel can be faster; SOL% = floor / time.\n",
                       ms(*p.floor_ms), p.floor_bound.empty() ? "" : fmt::format(" ({}-bound)", p.floor_bound));
  } else {
    out += "- Roofline floor: not available (the GPU has not been calibrated).\n";
  }
  out += fmt::format("- PyTorch eager: {}; torch.compile: {}.", p.eager_ms ? ms(*p.eager_ms) : "not measured",
                     p.compile_ms ? ms(*p.compile_ms) : "not measured");
  return out;
}

std::string format_precision_policy(Precision precision) {
  if (precision == Precision::tf32) {
    return "tf32 (the user opted in): fp32 matrix products may use TF32 tensor-core MMAs with fp32 accumulation; "
           "the comparison tolerance is loosened to match. Everything else is computed in fp32.";
  }
  if (precision == Precision::bf16) {
    return "bf16 (the user opted in): fp32 matrix products may round their inputs to bf16 for tensor-core MMAs, "
           "accumulating in fp32; the comparison tolerance is loosened to match. Everything else is computed in "
           "fp32.";
  }
  return "strict: results must match the reference to the accuracy of its own dtype (fp32 problems to fp32 "
         "accuracy). For fp32 matrix products, plain fp32 FMA or tensor cores with a 3xTF32 split (each operand "
         "as a TF32 high part plus a TF32 remainder, three MMAs) are allowed; plain TF32, fp16 or bf16 arithmetic "
         "on fp32 data is not.";
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

std::string build_system_prompt(const PromptLibrary& lib) {
  return "You write and improve CUDA kernels built on CuTe (CUTLASS's layout and tensor layer) for "
         "cutegen, which compiles, verifies and times every answer. Follow these rules in every answer.\n\n" +
         lib.rules();
}

Result<std::string> build_synthesis_prompt(const PromptLibrary& lib, const SynthesisInput& in, const PromptOptions& o) {
  const ProblemBrief& p = in.problem;
  PromptValues v = problem_values(lib, p, o);
  v.insert({{"contract", lib.contract()},
            {"cute_guide", lib.cute_guide()},
            {"workload_class", std::string(to_string(p.workload))},
            {"gpu", or_unknown(p.gpu)},
            {"cost_summary", format_cost_summary(p)}});
  v.merge(example_values(lib, p));
  return render(lib, PromptKind::synthesis, v);
}

Result<std::string> build_diagnose_prompt(const PromptLibrary& lib, const DiagnoseInput& in, const PromptOptions& o) {
  PromptValues v = problem_values(lib, in.problem, o);
  std::string situation =
      in.change_under_repair.empty()
          ? "This kernel has not passed yet; it is being made correct before any optimisation."
          : fmt::format("This kernel was correct before the last optimisation step, which tried: {}. That step "
                        "broke it.",
                        one_line(in.change_under_repair, 200));
  v.insert({{"guides", guides_for(lib, in.failure.kind)},
            {"numbered_kernel_block", fenced(number_lines(in.kernel), "text")},
            {"failure_kind", std::string(to_string(in.failure.kind))},
            {"verdict", to_string(in.failure.verdict)},
            {"failure_reason", one_line(or_unknown(in.failure.reason, "(no reason given)"), 400)},
            {"evidence_block", evidence_block(in.failure, o)},
            {"situation", situation},
            {"attempts", format_history(in.attempts, o.history, "None: this is the first diagnosis of this failure.")}});
  return render(lib, PromptKind::diagnose, v);
}

Result<std::string> build_repair_prompt(const PromptLibrary& lib, const RepairInput& in, const PromptOptions& o) {
  PromptValues v = problem_values(lib, in.problem, o);
  v.insert({{"kernel_block", fenced(in.kernel, "cuda")},
            {"failure_kind", std::string(to_string(in.failure.kind))},
            {"verdict", to_string(in.failure.verdict)},
            {"failure_reason", one_line(or_unknown(in.failure.reason, "(no reason given)"), 400)},
            {"evidence_block", evidence_block(in.failure, o)},
            {"diagnosis", or_unknown(in.diagnosis, "(no diagnosis)")},
            {"attempts", format_history(in.attempts, o.history, "None: this is the first repair of this failure.")}});
  return render(lib, PromptKind::repair, v);
}

Result<std::string> build_optimize_prompt(const PromptLibrary& lib, const OptimizeInput& in, const PromptOptions& o) {
  const ProblemBrief& p = in.problem;
  // The floor and the baselines appear here once, set against the best time; the cost summary
  // beside it keeps to bytes and FLOPs.
  std::string perf = fmt::format("- Current best kernel (below): {}", ms(in.best_ms));
  if (p.floor_ms && in.best_ms > 0) {
    perf += fmt::format(", {:.1f}% of speed-of-light (roofline floor {}{}; no kernel can be faster)",
                        100.0 * *p.floor_ms / in.best_ms, ms(*p.floor_ms),
                        p.floor_bound.empty() ? "" : ", " + p.floor_bound + "-bound");
  } else if (!p.floor_ms) {
    perf += "; no roofline floor (the GPU has not been calibrated)";
  }
  perf += ".\n";
  auto versus = [&](const char* name, const std::optional<double>& base) {
    if (!base || in.best_ms <= 0) return fmt::format("- {}: not measured.\n", name);
    return fmt::format("- {}: {}; the best kernel is {:.2f}x {}.\n", name, ms(*base),
                       *base >= in.best_ms ? *base / in.best_ms : in.best_ms / *base,
                       *base >= in.best_ms ? "faster" : "slower");
  };
  perf += versus("PyTorch eager", p.eager_ms);
  perf += versus("torch.compile", p.compile_ms);
  perf.pop_back();
  std::string profile =
      in.profile_summary.empty()
          ? "Not shown yet: profiles are withheld until the kernel's structure is settled. Choose from the menu "
            "by the kernel's structure and the history."
          : fenced(in.profile_summary, "text");
  PromptValues v = problem_values(lib, p, o);
  v.insert({{"cute_guide", lib.cute_guide()},
            {"menu", lib.menu(p.workload)},
            {"workload_class", std::string(to_string(p.workload))},
            {"gpu", or_unknown(p.gpu)},
            {"cost_summary", format_work_summary(p)},
            {"performance", perf},
            {"history", format_history(in.history, o.history, "No optimisation steps yet: this is the first.")},
            {"profile", profile},
            {"kernel_block", fenced(in.kernel, "cuda")},
            {"step", std::to_string(in.step)},
            {"max_steps", in.max_steps > 0 ? std::to_string(in.max_steps) : std::string("?")}});
  return render(lib, PromptKind::optimize, v);
}

Result<std::string> build_restart_prompt(const PromptLibrary& lib, const RestartInput& in, const PromptOptions& o) {
  const ProblemBrief& p = in.problem;
  std::string last = "None recorded.";
  if (in.last_failure) {
    last = fmt::format("{} ({}): {}\n{}", to_string(in.last_failure->kind), to_string(in.last_failure->verdict),
                       one_line(in.last_failure->reason, 400), evidence_block(*in.last_failure, o));
  }
  PromptValues v = problem_values(lib, p, o);
  v.insert({{"contract", lib.contract()},
            {"cute_guide", lib.cute_guide()},
            {"workload_class", std::string(to_string(p.workload))},
            {"gpu", or_unknown(p.gpu)},
            {"cost_summary", format_cost_summary(p)},
            {"why", one_line(or_unknown(in.why, "the previous attempts did not converge"), 400)},
            {"failure_history", format_history(in.failures, o.history, "No attempts recorded.")},
            {"last_failure", last}});
  v.merge(example_values(lib, p));
  return render(lib, PromptKind::restart, v);
}

// ---- checks -----------------------------------------------------------------------------------------

const std::vector<std::string>& prompt_placeholders(PromptKind kind) { return placeholder_table().at(kind); }

Status check_prompt_library(const PromptLibrary& lib) {
  for (PromptKind k : kAllPromptKinds) {
    const PromptTemplate& t = lib.prompt(k);
    std::set<std::string> want(prompt_placeholders(k).begin(), prompt_placeholders(k).end());
    std::set<std::string> have(t.placeholders().begin(), t.placeholders().end());
    std::string missing, extra;
    for (const std::string& n : want)
      if (!have.count(n)) missing += fmt::format(" {{{{{}}}}}", n);
    for (const std::string& n : have)
      if (!want.count(n)) extra += fmt::format(" {{{{{}}}}}", n);
    if (!missing.empty() || !extra.empty()) {
      return Error{fmt::format("prompt template {} does not match cutegen {}:{}{}{}{}", t.origin(), to_string(k),
                               missing.empty() ? "" : " it never uses", missing,
                               extra.empty() ? "" : (missing.empty() ? " it uses" : "; it uses"),
                               extra.empty() ? "" : extra + " which cutegen does not fill")};
    }
  }
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
