#include "report/run_report.h"

#include <fmt/format.h>

namespace cutegen {
namespace {

std::string ms(const std::optional<double>& v) { return v ? fmt::format("{:.4f} ms", *v) : "n/a"; }

std::string stop_text(const std::string& reason) {
  if (reason == "steps") return "step limit reached";
  if (reason == "plateau") return "no improvement for several steps (plateau)";
  if (reason == "target") return "target % of the roofline floor reached";
  if (reason == "budget") return "LLM budget spent";
  if (reason == "truncated")
    return "two answers in a row were cut off at the token limit: raise llm.max_tokens (or the budget, where it lowered "
           "the limit), or the model is looping";
  if (reason == "no_correct_kernel") return "no correct kernel after every synthesis attempt";
  return reason;
}

}  // namespace

std::string render_run_report(const RunSummary& s) {
  std::string r = fmt::format("# cutegen run: {}\n\n", s.problem_name);
  r += fmt::format("Workload class: {}. LLM: {}. Profiling: {}.\n\n", s.workload_class, s.llm, s.profile_policy);
  r += "## Baselines\n\n| | time |\n|---|---|\n";
  r += fmt::format("| eager PyTorch | {} |\n| torch.compile | {} |\n| roofline floor ({}) | {} |\n\n", ms(s.eager_ms),
                   ms(s.compile_ms), s.bound.empty() ? "?" : s.bound + "-bound", ms(s.floor_ms));
  r += "## Result\n\n";
  if (s.best) {
    const auto& b = *s.best;
    auto opt = [&](const char* k) -> std::optional<double> {
      return b.contains(k) && b[k].is_number() ? std::optional<double>(b[k].get<double>()) : std::nullopt;
    };
    r += fmt::format("Best kernel: {} (noise {:.4f} ms).\n", ms(opt("median_ms")), b.value("iqr_ms", 0.0));
    auto x = [](std::optional<double> v) { return v ? fmt::format("{:.2f}x", *v) : std::string("n/a"); };
    r += fmt::format("Speedup over eager: {}; over torch.compile: {}. ", x(opt("speedup_eager")), x(opt("speedup_compile")));
    r += opt("sol_pct") ? fmt::format("{:.1f}% of the roofline floor (SOL).\n", *opt("sol_pct")) : "SOL unknown.\n";
    r += "Files: `best/kernel.cu`, `best/eval.json`, `best/kernel.so`, the torch op module and `best/model_new.py`.\n";
  } else {
    r += "No correct kernel was found.\n";
  }
  r += fmt::format("\nStopped: {}.\n", stop_text(s.stop_reason));
  r += "\n## Optimisation steps\n\n";
  if (s.history.empty()) {
    r += "None.\n";
  } else {
    r += "| step | optimisation | outcome | time | note |\n|---|---|---|---|---|\n";
    for (const auto& h : s.history) {
      std::string t = h.contains("time_ms") ? fmt::format("{:.4f} ms", h["time_ms"].get<double>()) : "-";
      r += fmt::format("| {} | {} | {} | {} | {} |\n", h.value("step", 0), h.value("idea", ""), h.value("outcome", ""), t,
                       h.value("note", ""));
    }
  }
  r += fmt::format("\n## Cost\n\n{} synthesis attempt(s), {} LLM calls, {} tokens, ${:.4f}.\n", s.syntheses, s.llm_calls,
                   s.tokens, s.cost_usd);
  return r;
}

}  // namespace cutegen
