#include "report/suite_view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "common/testdata/test_helpers.h"
#include "report/testdata/synthetic_suite.h"

using namespace cutegen;
using cutegen::testing::TempDir;
using bench::TaskRecord;
using bench::TaskVerdict;
namespace fs = std::filesystem;

namespace {

TaskRecord task(const std::string& name, TaskVerdict v, std::optional<double> best, std::optional<double> eager,
                std::optional<double> compile = std::nullopt) {
  TaskRecord r;
  r.name = name;
  r.verdict = v;
  r.best_ms = best;
  r.eager_ms = eager;
  r.compile_ms = compile;
  return r;
}

// The staircase's value at p: the fraction of the last corner at or left of p.
double at(const std::vector<CurvePoint>& curve, double p) {
  double f = NAN;
  for (const auto& c : curve)
    if (c.p <= p) f = c.fraction;
  return f;
}

}  // namespace

// Speedups over eager 4, 2, 1.2, 0.5 among six tasks (a failure and a task not run): the staircase steps
// down at each speedup, from fast_0 = 4/6 at p = 0 to 0 past the largest.
TEST(SuiteView, FastPCurveStepsDownAtEverySpeedup) {
  std::vector<TaskRecord> tasks{task("a", TaskVerdict::correct, 1.0, 4.0), task("b", TaskVerdict::correct, 1.0, 2.0),
                                task("c", TaskVerdict::correct, 1.0, 1.2), task("d", TaskVerdict::correct, 2.0, 1.0),
                                task("e", TaskVerdict::no_correct_kernel, std::nullopt, 1.0),
                                task("f", TaskVerdict::not_started, std::nullopt, std::nullopt)};
  auto curve = fast_p_curve(tasks, bench::Baseline::eager);
  ASSERT_EQ(curve.size(), 5u);
  std::vector<std::pair<double, double>> want{{0, 4.0 / 6}, {0.5, 3.0 / 6}, {1.2, 2.0 / 6}, {2, 1.0 / 6}, {4, 0}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_DOUBLE_EQ(curve[i].p, want[i].first) << i;
    EXPECT_DOUBLE_EQ(curve[i].fraction, want[i].second) << i;
  }
  // No compile baseline anywhere: only fast_0 = 0.
  auto none = fast_p_curve(tasks, bench::Baseline::compile);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].fraction, 0);
}

// The curve and the summary's fast_p table are one definition: at p = 0, 1, 1.5, 2 they agree exactly,
// over both baselines, for the 100-task suite.
TEST(SuiteView, FastPCurveMatchesTheSummaryTable) {
  auto s = bench::summarize("optimize", "openai:gpt-5", fixtures::synthetic_tasks(100, false));
  auto v = make_suite_view(s, "/nonexistent");
  ASSERT_GT(v.fast_p_eager.size(), 20u);
  for (size_t i = 0; i < bench::kFastP.size(); ++i) {
    EXPECT_EQ(at(v.fast_p_eager, bench::kFastP[i]), s.over_eager.fast_p[i]) << bench::kFastP[i];
    EXPECT_EQ(at(v.fast_p_compile, bench::kFastP[i]), s.over_compile.fast_p[i]) << bench::kFastP[i];
  }
  EXPECT_EQ(v.fast_p_eager.back().fraction, 0);
  for (size_t i = 1; i < v.fast_p_eager.size(); ++i) EXPECT_LT(v.fast_p_eager[i].fraction, v.fast_p_eager[i - 1].fraction);
}

TEST(SuiteView, LogBinsHaveOneAsAnEdgeAndKeepEmptyBins) {
  auto bins = log_bins({{"one", 1.0}, {"half", 0.5}, {"two", 2.0}, {"eight", 8.0}, {"zero", 0.0}});
  ASSERT_EQ(bins.size(), 9u);  // 0.5 .. 11.3 in steps of sqrt(2)
  EXPECT_DOUBLE_EQ(bins.front().lo, 0.5);
  for (size_t i = 1; i < bins.size(); ++i) EXPECT_EQ(bins[i].lo, bins[i - 1].hi);
  size_t total = 0;
  for (const auto& b : bins) {
    total += b.tasks.size();
    for (const auto& name : b.tasks) {
      double v = name == "one" ? 1 : name == "half" ? 0.5 : name == "two" ? 2 : 8;
      EXPECT_TRUE(b.lo <= v && v < b.hi) << name << " in [" << b.lo << ", " << b.hi << ")";
    }
  }
  EXPECT_EQ(total, 4u);  // a zero (or negative) value has no place on a log axis
  EXPECT_EQ(bins[2].lo, 1.0);
  EXPECT_EQ(bins[2].tasks, std::vector<std::string>{"one"});
  EXPECT_TRUE(bins[1].tasks.empty());
}

TEST(SuiteView, SolBinsPutTheFloorModelsFailuresInTheirOwnBin) {
  auto bins = sol_bins({{"a", 5}, {"b", 10}, {"c", 99.9}, {"d", 100}, {"e", 104.5}});
  ASSERT_EQ(bins.size(), 11u);
  EXPECT_EQ(bins[0].tasks, std::vector<std::string>{"a"});
  EXPECT_EQ(bins[1].tasks, std::vector<std::string>{"b"});
  EXPECT_EQ(bins[9].tasks, std::vector<std::string>{"c"});
  EXPECT_EQ(bins[10].tasks, (std::vector<std::string>{"d", "e"}));
  EXPECT_TRUE(std::isinf(bins[10].hi));
  EXPECT_EQ(sol_bins({{"a", 50}}).size(), 10u);
}

TEST(SuiteView, RunPageLinksSayWhyOneIsMissing) {
  TempDir tmp;
  fs::create_directories(tmp.path / "tasks/has page");
  std::ofstream(tmp.path / "tasks/has page/report.html") << "<html>";
  fs::create_directories(tmp.path / "tasks/no_page");
  auto s = bench::summarize("optimize", "x",
                            {task("has page", TaskVerdict::correct, 1.0, 2.0), task("no_page", TaskVerdict::crashed, {}, {}),
                             task("never", TaskVerdict::not_started, {}, {})});
  auto v = make_suite_view(s, tmp.path);
  ASSERT_EQ(v.links.size(), 3u);
  std::map<std::string, RunPageLink> by_name;  // links are in the summary's (name) order
  for (size_t i = 0; i < v.links.size(); ++i) by_name[v.summary.tasks[i].name] = v.links[i];
  EXPECT_TRUE(by_name["has page"].exists);
  EXPECT_EQ(by_name["has page"].href, "tasks/has%20page/report.html");
  EXPECT_FALSE(by_name["no_page"].exists);
  EXPECT_NE(by_name["no_page"].missing.find("cutegen report"), std::string::npos) << by_name["no_page"].missing;
  EXPECT_NE(by_name["never"].missing.find("never started"), std::string::npos) << by_name["never"].missing;

  // A page written elsewhere (-o) links back into the suite directory.
  fs::create_directories(tmp.path / "pages/2025");
  auto elsewhere = make_suite_view(s, tmp.path, tmp.path / "pages/2025");
  EXPECT_EQ(elsewhere.links[0].href, "../../tasks/has%20page/report.html");
  EXPECT_EQ(elsewhere.links[0].path, "tasks/has page/report.html");
  EXPECT_EQ(make_suite_view(s, tmp.path, tmp.path).links[0].href, "tasks/has%20page/report.html");
}

TEST(SuiteView, LoadsASuiteDirectoryAsBenchReportDoes) {
  TempDir tmp;
  ASSERT_TRUE(fixtures::write_synthetic_suite(tmp.path / "s", 30, false));
  EXPECT_TRUE(is_suite_dir(tmp.path / "s"));
  auto v = load_suite_view(tmp.path / "s");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->summary.total, 30);
  auto direct = bench::summarize("optimize", "openai:gpt-5", fixtures::synthetic_tasks(30, false));
  EXPECT_EQ(v->summary.to_json(), direct.to_json());  // the disk round trip loses nothing
  int pages = 0;
  for (const auto& l : v->links) pages += l.exists;
  EXPECT_GT(pages, 10);
  EXPECT_LT(pages, 30);

  EXPECT_FALSE(is_suite_dir(tmp.path));
  auto none = load_suite_view(tmp.path);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("is not a cutegen bench suite"), std::string::npos) << none.error().message;
}
