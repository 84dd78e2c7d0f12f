#pragma once
// The compact step history the optimise, diagnose and restart prompts show: one line per step, and a
// bounded number of lines however long the run, so a long run neither crowds out the kernel nor grows
// the prompt without limit. What the LLM most needs is what was tried recently (not to repeat it) and
// what the best kernel did (what to build on), so the bound keeps the last N steps plus the best one.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "prompt/prompt_inputs.h"

namespace cutegen {

struct HistoryLimits {
  std::size_t keep_last = 8;           // most recent steps shown
  std::size_t max_idea_chars = 100;    // per-field clips keep every entry on one short line
  std::size_t max_detail_chars = 90;
  std::size_t max_evidence_chars = 200;
};

// "step 7: 3xTF32 MMA -> improved, kept: 0.412 ms, 1.31x the best before [best]"; a repair round is
// "repair 2: ...", a synthesis attempt "synthesis attempt 1 -> ...". Each fact appears once.
std::string format_step(const StepRecord& step, const HistoryLimits& limits = {}, bool is_best = false);

// One line per step: the last `keep_last`, plus the fastest accepted step when it is older, with
// "(k steps not shown)" lines where steps were left out. `empty_text` is returned when there are none.
std::string format_history(const std::vector<StepRecord>& steps, const HistoryLimits& limits = {},
                           std::string_view empty_text = "No steps yet.");

// `text` on one line (newlines and runs of whitespace become one space), at most `max_chars`
// characters, clipped with "..." (never inside a UTF-8 sequence).
std::string one_line(std::string_view text, std::size_t max_chars);

}  // namespace cutegen
