#include "report/suite_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "bench/suite_dir.h"
#include "report/html.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

// Bin k of the log bins is [2^(k/2), 2^((k+1)/2)).
double edge(int k) { return std::pow(2.0, k / 2.0); }

int log_bin_of(double v) {
  int k = static_cast<int>(std::floor(2 * std::log2(v)));
  // log2 rounds; the bin is decided by the same edges the page shows.
  while (v < edge(k)) --k;
  while (v >= edge(k + 1)) ++k;
  return k;
}

// The suite directory as seen from the page's directory: "" when they are one.
fs::path from_page(const fs::path& dir, const fs::path& page_dir) {
  if (page_dir.empty()) return {};
  std::error_code ec;
  fs::path a = fs::weakly_canonical(fs::absolute(dir), ec), b = fs::weakly_canonical(fs::absolute(page_dir), ec);
  fs::path rel = a.lexically_relative(b);
  return rel == "." ? fs::path() : rel;
}

RunPageLink run_page_link(const fs::path& dir, const fs::path& prefix, const bench::TaskRecord& t,
                          const std::string& mode) {
  RunPageLink l;
  l.path = "tasks/" + t.name + "/report.html";
  l.href = html::url_path((prefix / l.path).string());
  std::error_code ec;
  if (fs::is_regular_file(dir / l.path, ec)) {
    l.exists = true;
  } else if (mode == "baselines") {
    l.missing = "a baselines-only task has no optimize run";
  } else if (!fs::is_directory(dir / "tasks" / t.name, ec)) {
    l.missing = "the task has no run directory (it never started)";
  } else {
    l.missing = fmt::format("no report.html in its run directory: `cutegen report {}` writes it",
                            (dir / "tasks" / t.name).string());
  }
  return l;
}

}  // namespace

std::vector<CurvePoint> fast_p_curve(const std::vector<bench::TaskRecord>& tasks, bench::Baseline b) {
  std::set<double> corners{0.0};
  for (const auto& t : tasks)
    if (auto x = bench::counted_speedup(t, b)) corners.insert(*x);
  std::vector<CurvePoint> out;
  for (double p : corners) out.push_back({p, bench::fast_p(tasks, b, p)});
  return out;
}

std::vector<Bin> log_bins(const std::vector<std::pair<std::string, double>>& values) {
  std::vector<std::pair<std::string, double>> positive;
  for (const auto& v : values)
    if (v.second > 0 && std::isfinite(v.second)) positive.push_back(v);
  if (positive.empty()) return {};
  int lo = std::numeric_limits<int>::max(), hi = std::numeric_limits<int>::min();
  for (const auto& [_, v] : positive) {
    lo = std::min(lo, log_bin_of(v));
    hi = std::max(hi, log_bin_of(v));
  }
  std::vector<Bin> bins;
  for (int k = lo; k <= hi; ++k) bins.push_back({edge(k), edge(k + 1), {}});
  for (const auto& [name, v] : positive) bins[log_bin_of(v) - lo].tasks.push_back(name);
  return bins;
}

std::vector<Bin> sol_bins(const std::vector<std::pair<std::string, double>>& values) {
  std::vector<Bin> bins;
  for (int k = 0; k < 10; ++k) bins.push_back({10.0 * k, 10.0 * (k + 1), {}});
  bool over = std::any_of(values.begin(), values.end(), [](const auto& v) { return v.second >= 100; });
  if (over) bins.push_back({100, std::numeric_limits<double>::infinity(), {}});
  for (const auto& [name, v] : values) {
    if (!(v >= 0)) continue;
    size_t k = v >= 100 ? 10 : static_cast<size_t>(v / 10);
    // v / 10 can round up across an edge; the edges decide.
    while (k > 0 && v < bins[k].lo) --k;
    while (k + 1 < bins.size() && v >= bins[k + 1].lo) ++k;
    bins[k].tasks.push_back(name);
  }
  return bins;
}

SuiteView make_suite_view(bench::SuiteSummary summary, const fs::path& dir, const fs::path& page_dir) {
  SuiteView v;
  v.dir = dir;
  v.summary = std::move(summary);
  const auto& tasks = v.summary.tasks;
  const fs::path prefix = from_page(dir, page_dir);
  for (const auto& t : tasks) v.links.push_back(run_page_link(dir, prefix, t, v.summary.mode));
  std::vector<std::pair<std::string, double>> eager, compile, ce, physics, sol;
  for (const auto& t : tasks) {
    if (auto x = bench::counted_speedup(t, bench::Baseline::eager)) eager.emplace_back(t.name, *x);
    if (auto x = bench::counted_speedup(t, bench::Baseline::compile)) compile.emplace_back(t.name, *x);
    if (t.verdict == bench::TaskVerdict::correct && t.sol_pct) sol.emplace_back(t.name, *t.sol_pct);
    if (t.verdict == bench::TaskVerdict::measured) {
      if (auto x = bench::compile_over_eager(t)) ce.emplace_back(t.name, *x);
      if (auto x = t.physics_speedup()) physics.emplace_back(t.name, *x);
    }
  }
  if (v.summary.mode != "baselines") {
    v.fast_p_eager = fast_p_curve(tasks, bench::Baseline::eager);
    v.fast_p_compile = fast_p_curve(tasks, bench::Baseline::compile);
  }
  v.speedup_eager = log_bins(eager);
  v.speedup_compile = log_bins(compile);
  v.compile_over_eager = log_bins(ce);
  v.physics = log_bins(physics);
  v.sol = sol_bins(sol);
  return v;
}

bool is_suite_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "suite.json", ec);
}

Result<SuiteView> load_suite_view(const fs::path& dir, const fs::path& page_dir) {
  auto suite = bench::SuiteDir::open_existing(dir);
  if (!suite) return suite.error();
  auto collected = suite->collect();
  return make_suite_view(bench::summarize(suite->manifest().mode, suite->manifest().llm, std::move(collected.records),
                                          std::move(collected.damaged)),
                         dir, page_dir);
}

}  // namespace cutegen
