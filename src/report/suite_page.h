#pragma once
// The suite page: one self-contained HTML file for a bench suite (docs/report.md) — the headline
// numbers, fast_p over eager and torch.compile as curves, the speedup and SOL% distributions, what each
// task cost, and the sortable task table linking to every task's run page. A baselines-only suite gets
// its own page: the baselines, the roofline floor and the best speedup physics allows. Rendered from the
// suite view (suite_view.h), i.e. from the typed summary summary.md/.csv/.json are rendered from.
#include <optional>
#include <string>

#include "report/suite_view.h"
#include "report/svg_chart.h"

namespace cutegen {

// fast_p against p from 0 to the largest speedup, over eager and over torch.compile (staircases), with
// the summary's table values marked at p = 0, 1, 1.5, 2 (class "fastp-eager" / "fastp-compile").
svg::Chart fast_p_chart(const SuiteView& v);

// A histogram of `bins` on a log x axis: bars of class "slower" below 1 and "faster" from 1 up, named
// in the legend `below` and `above`. nullopt when there is nothing to count.
std::optional<svg::Chart> speedup_histogram(const std::vector<Bin>& bins, std::string id, std::string title,
                                            std::string x_label, std::string below = "slower",
                                            std::string above = "faster");

// SOL% of the correct tasks in 10% bins. nullopt when no correct task has a SOL.
std::optional<svg::Chart> sol_histogram(const SuiteView& v);

// Dollars per task, most expensive first (bars of class "correct" / "not-correct"). nullopt when no
// task cost anything (replayed answers, no LLM).
std::optional<svg::Chart> cost_chart(const SuiteView& v);

std::string render_suite_page(const SuiteView& v);

}  // namespace cutegen
