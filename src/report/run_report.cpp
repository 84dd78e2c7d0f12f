#include "report/run_report.h"
#include "common/terminal_text.h"

#include <fmt/format.h>

namespace cutegen {
namespace {

std::string ms(const std::optional<double>& v) { return v ? fmt::format("{:.4f} ms", *v) : "n/a"; }

std::string baseline(const std::optional<BaselineTime>& b) {
  if (!b) return "n/a";
  if (!b->stats) return "unavailable: " + b->error.substr(0, b->error.find('\n'));
  return ms(b->median_ms());
}

}  // namespace

std::string stop_reason_text(const RunSummary& s) {
  const std::string& reason = s.stop_reason;
  const std::string& detail = s.stop_detail;
  if (reason.empty())
    return "not yet: its log has no stop event (the run is still going, or was interrupted: --resume continues it)";
  if (reason == "steps") return "step limit reached";
  if (reason == "plateau") return "no improvement for several steps (plateau)";
  if (reason == "target") return "target % of the roofline floor reached";
  if (reason == "declined")
    return fmt::format("the LLM proposed no further change (NO_FURTHER_CHANGE): \"{}\"", detail);
  if (reason == "budget") return "LLM budget spent";
  if (reason == "truncated")
    return "two answers in a row were cut off at the token limit: raise llm.max_tokens (or the budget, where it lowered "
           "the limit), or the model is looping";
  if (reason == "no_correct_kernel") return "no correct kernel after every synthesis attempt";
  if (reason == "seed_failed")
    return fmt::format("no LLM: the seed kernel for y = {} failed the judge{} (a cutegen bug: please report it); give "
                       "--llm to have an LLM write the kernel",
                       detail, s.failed_seed ? ": " + s.failed_seed->verdict_line() : "");
  if (reason == "seed")
    return fmt::format("no LLM: the seed kernel for y = {} was judged (docs/seed.md); give --llm to optimise further",
                       detail);
  return reason;
}

namespace {

// Table cells stay on one line and keep the table's columns.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? ' ' : c == '|' ? '/' : c;
  return out;
}

std::string outcome_cell(const StepRecord& h) {
  std::string o(to_string(h.outcome));
  if (h.verdict) o += fmt::format(" ({})", to_string(*h.verdict));
  return o;
}

}  // namespace

// Steps that asked for several candidates (--candidates): what each one tried and what became of it.
// The step's row above is the chosen one's; a screened time ranks, it is no result.
std::string candidates_text(const std::vector<StepRecord>& history) {
  std::string r;
  for (const auto& h : history)
    for (const auto& c : h.candidates) {
      r += fmt::format("- step {}, candidate {} ({}): {}", h.n, c.n, c.item, to_string(c.outcome));
      if (c.verdict) r += fmt::format(" ({})", to_string(*c.verdict));
      if (!c.idea.empty()) r += " — " + c.idea;
      if (c.screened_ms) r += fmt::format("; screened {}", ms(c.screened_ms));
      if (!c.note.empty()) r += "; " + c.note;
      r += "\n";
    }
  return r.empty() ? r : "\nCandidates of each step (the row above is the chosen one's; a screened time only ranks):\n\n" + r;
}

std::string render_run_report(const RunSummary& s) {
  std::string r = fmt::format("# cutegen run: {}\n\n", s.problem_name);
  r += fmt::format("Workload class: {}. LLM: {}. Profiling: {}.\n", to_string(s.workload_class), s.llm,
                   s.profile_policy);
  // A first kernel close to the example is no achievement of the LLM's: say which one it saw.
  r += s.example_shown.empty() ? "No example kernel was shown.\n\n"
                               : fmt::format("Example kernel shown to the LLM (as a reference for idioms): `{}`.\n\n",
                                             s.example_shown);
  // Like the example: what the LLM started from is part of what its result means.
  if (!s.seed_pattern.empty() && s.stop_reason != "seed" && s.stop_reason != "seed_failed")
    r += fmt::format("The first kernel was cutegen's seed for y = {} (written without an LLM, docs/seed.md); "
                     "the optimisation steps start from it.\n\n",
                     s.seed_pattern);
  r += "## Baselines\n\n| | time |\n|---|---|\n";
  r += fmt::format("| eager PyTorch | {} |\n| torch.compile | {} |\n| roofline floor ({}) | {} |\n\n",
                   baseline(s.baselines.eager), baseline(s.baselines.compile),
                   s.floor && !s.floor->bound.empty() ? s.floor->bound + "-bound" : "?",
                   ms(s.floor ? std::optional<double>(s.floor->floor_ms) : std::nullopt));
  r += "## Result\n\n";
  if (s.best) {
    const Evaluation& b = *s.best;
    r += fmt::format("Best kernel: {} (noise {:.4f} ms).\n", ms(b.median_ms()), b.noise_ms());
    auto x = [](std::optional<double> v) { return v ? fmt::format("{:.2f}x", *v) : std::string("n/a"); };
    r += fmt::format("Speedup over eager: {}; over torch.compile: {}. ", x(b.speedup_eager()), x(b.speedup_compile()));
    r += b.sol_pct() ? fmt::format("{:.1f}% of the roofline floor (SOL).\n", *b.sol_pct()) : "SOL unknown.\n";
    // What the kernel may be called on (docs/judge.md, guarantee 9): at any other shape it was not checked.
    if (b.generalization)
      r += fmt::format("Verified at {} shape{} of the problem: {}.\n", b.generalization->verified.size(),
                       b.generalization->verified.size() == 1 ? "" : "s", b.generalization->verified_text());
    r += "Files: `best/kernel.cu`, `best/eval.json`, `best/kernel.so`, the torch op module and `best/model_new.py` "
         "(a self-contained KernelBench submission; `cutegen export` makes an op package: docs/export.md).\n";
  } else {
    r += "No correct kernel was found.\n";
  }
  r += fmt::format("\nStopped: {}.\n", stop_reason_text(s));
  r += "\n## Optimisation steps\n\n";
  if (s.history.empty()) {
    r += "None.\n";
  } else {
    r += "| step | optimisation | outcome | time | note |\n|---|---|---|---|---|\n";
    for (const auto& h : s.history) {
      std::string note = h.note;
      if (!h.evidence.empty()) note += (note.empty() ? "" : "; ") + ("evidence: " + h.evidence);
      // A tuning follows the step it tuned and has no number of its own.
      std::string step = h.kind == StepKind::tuning ? fmt::format("tuning after {}", h.n) : std::to_string(h.n);
      r += fmt::format("| {} | {} | {} | {} | {} |\n", step, cell(h.idea), outcome_cell(h), h.time_ms ? ms(h.time_ms) : "-",
                       cell(note));
    }
    r += candidates_text(s.history);
  }
  r += fmt::format("\n## Cost\n\n{} synthesis attempt(s), {} LLM calls, {} tokens, ${:.4f}.\n", s.syntheses, s.llm_calls,
                   s.tokens, s.cost_usd);
  // The prompts put what a run repeats first so the providers' caches serve it: say how much they did.
  if (s.input_tokens > 0)
    r += fmt::format("Input tokens: {}, of which {} ({:.0f}%) were read from the provider's prompt cache.\n",
                     s.input_tokens, s.cached_input_tokens, 100.0 * s.cached_input_tokens / s.input_tokens);
  // report.md quotes the LLM (its ideas, NO_FURTHER_CHANGE reasons) and the judge's evidence, and is
  // printed and `cat`: their control characters are shown, never obeyed by a terminal.
  return terminal_safe(r, LineBreaks::keep);
}

}  // namespace cutegen
