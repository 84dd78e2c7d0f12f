#include "prompt/history.h"

#include <algorithm>

#include <fmt/format.h>

namespace cutegen {
namespace {

// Index of the fastest improving step, or npos.
std::size_t best_index(const std::vector<StepRecord>& steps) {
  std::size_t best = std::string::npos;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    if (s.outcome != StepOutcome::improved || !s.time_ms) continue;
    if (best == std::string::npos || *s.time_ms < *steps[best].time_ms) best = i;
  }
  return best;
}

std::string_view outcome_phrase(StepOutcome o) {
  switch (o) {
    case StepOutcome::improved: return "improved, kept";
    case StepOutcome::not_faster: return "correct but not faster, rolled back";
    case StepOutcome::compile_error: return "compile error";
    case StepOutcome::rejected: return "rejected by the checks";
    case StepOutcome::runtime_error: return "runtime failure";
    case StepOutcome::wrong_result: return "wrong result";
    case StepOutcome::bad_answer: return "answer unusable (format or edits did not apply)";
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

std::vector<StepRecord> bounded_history(const std::vector<StepRecord>& steps, std::size_t keep_last) {
  const std::size_t first_recent = steps.size() > keep_last ? steps.size() - keep_last : 0;
  std::vector<StepRecord> out;
  std::size_t best = best_index(steps);
  if (best != std::string::npos && best < first_recent) out.push_back(steps[best]);
  out.insert(out.end(), steps.begin() + static_cast<std::ptrdiff_t>(first_recent), steps.end());
  return out;
}

std::string format_step(const StepRecord& s, const HistoryLimits& limits, bool is_best) {
  std::string line = fmt::format("step {}: {} -> {}", s.n, one_line(s.idea, limits.max_idea_chars),
                                 outcome_phrase(s.outcome));
  std::vector<std::string> facts;
  if (s.time_ms) facts.push_back(fmt::format("{:.4g} ms", *s.time_ms));
  if (s.speedup) facts.push_back(fmt::format("{:.2f}x vs the best before", *s.speedup));
  if (!s.detail.empty()) facts.push_back(one_line(s.detail, limits.max_detail_chars));
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
