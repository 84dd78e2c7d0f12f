#include "prompt/history.h"

#include <algorithm>

#include <fmt/format.h>

namespace cutegen {
namespace {

// Index of the fastest accepted step, or npos.
std::size_t best_index(const std::vector<StepRecord>& steps) {
  std::size_t best = std::string::npos;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    if (s.outcome != StepOutcome::accepted || !s.time_ms) continue;
    if (best == std::string::npos || *s.time_ms < *steps[best].time_ms) best = i;
  }
  return best;
}

std::string label(const StepRecord& s) {
  switch (s.kind) {
    case StepKind::optimization: return fmt::format("step {}", s.n);
    case StepKind::repair: return fmt::format("repair {}", s.n);
    case StepKind::synthesis: return fmt::format("synthesis attempt {}", s.n);
    case StepKind::tuning: return s.n == 0 ? std::string("tuning of the first kernel") : fmt::format("tuning after step {}", s.n);
  }
  return fmt::format("step {}", s.n);
}

// "wrong result (mismatch)", from the verdict when there is one.
std::string failure_phrase(const std::optional<Verdict>& verdict) {
  if (!verdict) return "failed";
  auto kind = failure_kind_for_verdict(*verdict);
  if (!kind) return to_string(*verdict);
  return fmt::format("{} ({})", to_string(*kind), to_string(*verdict));
}

std::string outcome_phrase(const StepRecord& s) {
  if (s.kind == StepKind::tuning) {
    switch (s.outcome) {
      case StepOutcome::accepted: return "faster knob values found, now the kernel's defaults";
      case StepOutcome::unusable: return "the knob declarations could not be used";
      default: return "no faster knob values, the defaults stay";
    }
  }
  switch (s.outcome) {
    case StepOutcome::accepted: return s.kind == StepKind::optimization ? "improved, kept" : "correct";
    case StepOutcome::slower: return "correct but not faster, rolled back";
    case StepOutcome::incorrect:
      return failure_phrase(s.verdict) + (s.kind == StepKind::optimization ? ", rolled back" : "");
    case StepOutcome::undone:
      return fmt::format("broke the kernel: {}; the repair only undid the change, so the idea failed",
                         failure_phrase(s.verdict));
    case StepOutcome::unusable: return "answer unusable (format or edits did not apply)";
    case StepOutcome::declined: return "declined: no further change proposed";
  }
  return "?";
}

std::string skipped_line(std::size_t count) {
  return fmt::format("({} step{} not shown)\n", count, count == 1 ? "" : "s");
}

}  // namespace

std::string one_line(std::string_view text, std::size_t max_chars) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() <= max_chars) return out;
  std::size_t cut = max_chars >= 3 ? max_chars - 3 : 0;
  // Back up to the start of a UTF-8 sequence so the clipped text stays valid.
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  return out.substr(0, cut) + "...";
}

std::string format_step(const StepRecord& s, const HistoryLimits& limits, bool is_best) {
  std::string line = label(s);
  if (!s.idea.empty()) line += ": " + one_line(s.idea, limits.max_idea_chars);
  line += " -> " + outcome_phrase(s);
  std::vector<std::string> facts;
  if (s.time_ms) facts.push_back(fmt::format("{:.4g} ms", *s.time_ms));
  if (s.speedup) facts.push_back(fmt::format("{:.2f}x the best before", *s.speedup));
  if (!s.note.empty()) facts.push_back(one_line(s.note, limits.max_detail_chars));
  if (!s.evidence.empty()) facts.push_back("evidence: " + one_line(s.evidence, limits.max_evidence_chars));
  // A step with several candidates: the ideas that lost or failed, so later steps do not repeat them blindly.
  std::string others;
  for (const auto& c : s.candidates) {
    if (c.outcome == CandidateOutcome::chosen || c.idea.empty()) continue;
    others += fmt::format("{}{} ({})", others.empty() ? "" : ", ", one_line(c.idea, limits.max_idea_chars),
                          c.outcome == CandidateOutcome::lost ? std::string("correct, slower in screening")
                          : c.verdict                          ? to_string(*c.verdict)
                                                               : std::string(to_string(c.outcome)));
  }
  if (!others.empty()) facts.push_back("other candidates: " + others);
  for (std::size_t i = 0; i < facts.size(); ++i) line += (i ? "; " : ": ") + facts[i];
  if (is_best) line += " [best]";
  return line;
}

std::string format_history(const std::vector<StepRecord>& steps, const HistoryLimits& limits,
                           std::string_view empty_text) {
  if (steps.empty()) return std::string(empty_text);
  const std::size_t first_recent = steps.size() > limits.keep_last ? steps.size() - limits.keep_last : 0;
  const std::size_t best = best_index(steps);
  std::string out;
  std::size_t next = 0;  // the first step not yet shown or counted
  auto show = [&](std::size_t i) {
    if (i > next) out += skipped_line(i - next);
    out += format_step(steps[i], limits, i == best) + "\n";
    next = i + 1;
  };
  if (best != std::string::npos && best < first_recent) show(best);
  for (std::size_t i = first_recent; i < steps.size(); ++i) show(i);
  out.pop_back();
  return out;
}

}  // namespace cutegen
