#pragma once
// The run page: one self-contained HTML file telling a run's story (docs/report.md) — the header
// numbers, the trajectory of every evaluated kernel against the baselines and the floor, the best
// kernels on the roofline, each step with its evidence and diff, the profiles the LLM read, and what
// each phase cost. Rendered from the run view (run_view.h), the same data report.md is built from.
#include <optional>
#include <string>

#include "report/run_view.h"
#include "report/svg_chart.h"

namespace cutegen {

// Time per attempt: accepted, rolled back and failed attempts (failed ones on a band at the top, as
// they have no time), the best so far, eager / torch.compile / floor lines, and where profiling began.
svg::Chart trajectory_chart(const RunView& v);

// Arithmetic intensity (the problem's FLOPs over its minimum bytes) against achieved GFLOP/s for every
// accepted kernel and the baselines, under the calibrated bandwidth slope and compute roof. nullopt
// with `why_not` set when the run lacks what it needs (no floor, no calibration, no FLOPs).
std::optional<svg::Chart> roofline_chart(const RunView& v, std::string& why_not);

std::string render_run_page(const RunView& v);

}  // namespace cutegen
