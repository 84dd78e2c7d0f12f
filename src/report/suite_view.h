#pragma once
// A bench suite as its HTML page sees it: the suite's typed summary (bench/summary.h, the same one
// summary.md/.csv/.json are rendered from, so a number cannot differ between them), each task's link to
// its run page, and the distributions the charts draw, derived from the summary's own definitions
// (bench::counted_speedup, bench::fast_p).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/summary.h"
#include "common/result.h"

namespace cutegen {

// A task's run page, tasks/<name>/report.html in the suite directory.
struct RunPageLink {
  std::string href;      // URL-escaped, relative to the directory the page is written to
  std::string path;      // relative to the suite directory, as text
  bool exists = false;
  std::string missing;   // why there is none ("" when it exists)
};

// A corner of KernelBench's fast_p staircase: for p >= this p (until the next corner), fast_p = fraction.
struct CurvePoint {
  double p = 0, fraction = 0;
};

// One histogram bin, [lo, hi); hi may be +infinity (the last SOL bin).
struct Bin {
  double lo = 0, hi = 0;
  std::vector<std::string> tasks;  // names, in the summary's order
};

struct SuiteView {
  std::filesystem::path dir;
  bench::SuiteSummary summary;
  std::vector<RunPageLink> links;  // parallel to summary.tasks
  // fast_p from p = 0 to the largest counted speedup: the staircase's corners.
  std::vector<CurvePoint> fast_p_eager, fast_p_compile;
  // Counted speedups (optimize), torch.compile over eager and eager over the floor (baselines) in bins
  // of a factor sqrt(2), 1 always an edge: whether a task beat its baseline is never hidden in a bin.
  std::vector<Bin> speedup_eager, speedup_compile, compile_over_eager, physics;
  std::vector<Bin> sol;  // SOL% of correct tasks in 10% bins, [100, inf) last
};

// The fast_p staircase over `tasks` (its corners: p = 0, then every distinct counted speedup).
std::vector<CurvePoint> fast_p_curve(const std::vector<bench::TaskRecord>& tasks, bench::Baseline b);
// Named values in bins of a factor sqrt(2) (edges 2^(k/2)); empty bins between the extremes included.
std::vector<Bin> log_bins(const std::vector<std::pair<std::string, double>>& values);
// Percentages in 10% bins from 0 to 100, and [100, inf) when a value reaches it.
std::vector<Bin> sol_bins(const std::vector<std::pair<std::string, double>>& values);

// The view of a summary; `dir` is where the run pages are looked for (tasks/<name>/report.html), and
// `page_dir` the directory the page goes to (links are relative to it; empty: `dir`), so a page written
// elsewhere with -o still links to the runs.
SuiteView make_suite_view(bench::SuiteSummary summary, const std::filesystem::path& dir,
                          const std::filesystem::path& page_dir = {});

// A bench suite directory's view: its manifest and every task's record, summarized as `bench report`
// does. Error (one line): not a suite directory, a damaged record.
Result<SuiteView> load_suite_view(const std::filesystem::path& dir, const std::filesystem::path& page_dir = {});

// Whether a directory is a bench suite (it has suite.json): `cutegen report` picks the page by this.
bool is_suite_dir(const std::filesystem::path& dir);

}  // namespace cutegen
