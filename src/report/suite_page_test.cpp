#include "report/suite_page.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "report/testdata/synthetic_suite.h"

using namespace cutegen;
using bench::TaskVerdict;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + part.size())) ++n;
  return n;
}

// The part of the page from `<tag id="ID"` to its closing tag.
std::string element(const std::string& page, const std::string& tag, const std::string& id) {
  size_t start = page.find("<" + tag + " id=\"" + id + "\"");
  if (start == std::string::npos) start = page.find("id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  size_t end = page.find("</" + tag + ">", start);
  return page.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// A header card's markup (three nested divs).
std::string card(const std::string& page, const std::string& id) {
  size_t start = page.find("<div id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</div></div>", start) - start);
}

// data-ATTR values of the elements of class `cls` inside `part`, in order.
std::vector<double> values(const std::string& part, const std::string& cls, const std::string& attr) {
  std::vector<double> out;
  std::regex re("class=\"(?:pt|bar) " + cls + "\"[^>]*? data-" + attr + "=\"([^\"]*)\"");
  for (std::sregex_iterator it(part.begin(), part.end(), re), end; it != end; ++it) out.push_back(std::stod((*it)[1]));
  return out;
}

bench::SuiteSummary hundred() { return bench::summarize("optimize", "openai:gpt-5", fixtures::synthetic_tasks(100, false)); }

}  // namespace

// The scale requirement: a 100-task suite's page stays under 5 MB (it is far below: every
// number is a table cell or an SVG element, nothing per task grows with the suite but its row).
TEST(SuitePage, HundredTasksStayFarUnderFiveMegabytes) {
  std::string page = render_suite_page(make_suite_view(hundred(), "/suites/l1"));
  EXPECT_LT(page.size(), 5u * 1000 * 1000);
  EXPECT_LT(page.size(), 400u * 1000) << "a 100-task page grew to " << page.size() << " bytes";
  RecordProperty("page_bytes", static_cast<int>(page.size()));
  EXPECT_FALSE(has(page, "src=")) << "the page must not load anything";
  EXPECT_FALSE(has(page, "<link"));
}

// One source: the fast_p marks on the curve, the fast_p table and the cards carry the summary's own
// numbers, as summary.json has them.
TEST(SuitePage, NumbersAreThoseOfSummaryJson) {
  auto s = hundred();
  auto json = s.to_json();
  std::string page = render_suite_page(make_suite_view(s, "/suites/l1"));
  std::string curve = element(page, "svg", "fast-p-curve");
  ASSERT_FALSE(curve.empty());
  for (auto [cls, key] : {std::pair{"fastp-eager", "over_eager"}, std::pair{"fastp-compile", "over_compile"}}) {
    auto ys = values(curve, cls, "y");
    auto xs = values(curve, cls, "x");
    ASSERT_EQ(ys.size(), bench::kFastP.size()) << cls;
    for (size_t i = 0; i < bench::kFastP.size(); ++i) {
      EXPECT_EQ(xs[i], bench::kFastP[i]);
      EXPECT_EQ(ys[i], json[key]["fast_p"][fmt::format("fast_{:g}", bench::kFastP[i])].get<double>()) << cls << i;
    }
  }
  std::string table = element(page, "table", "fast-p");
  ASSERT_FALSE(table.empty());
  EXPECT_TRUE(has(table, fmt::format("data-sort=\"{}\">{:.3f}</td>", s.over_eager.fast_p[1], s.over_eager.fast_p[1])))
      << table;
  EXPECT_TRUE(has(table, fmt::format(">{:.2f}x</td>", json["over_compile"]["geometric_mean"].get<double>())));
  EXPECT_TRUE(has(card(page, "fast1-eager"), fmt::format("{:.3f}", s.over_eager.fast_p[1])));
  EXPECT_TRUE(has(card(page, "cost"), fmt::format("${:.2f}", json["cost_usd"].get<double>())));
}

// Every task is a row of the sortable table, its numbers as data-sort keys and in summary.md's formats.
TEST(SuitePage, TaskTableHasEveryTaskWithItsNumbers) {
  auto s = hundred();
  std::string page = render_suite_page(make_suite_view(s, "/suites/l1"));
  std::string table = element(page, "table", "tasks");
  ASSERT_FALSE(table.empty());
  EXPECT_TRUE(has(table, "class=\"compact sortable\""));
  EXPECT_EQ(count(table, "<tbody><tr>"), 100);
  int checked = 0;
  for (const auto& t : s.tasks) {
    if (t.verdict != TaskVerdict::correct || !t.speedup_compile()) continue;
    EXPECT_TRUE(has(table, fmt::format("data-sort=\"{}\">{}</td>", *t.speedup_eager(),
                                       bench::format_speedup(t.speedup_eager()))))
        << t.name;
    EXPECT_TRUE(has(table, fmt::format("data-sort=\"{}\">{}</td>", *t.sol_pct, bench::format_pct(t.sol_pct)))) << t.name;
    ++checked;
  }
  EXPECT_GT(checked, 40);
  // Nothing on disk at /suites/l1: every task says it has no run page, and why.
  EXPECT_EQ(count(table, "(no run page)"), 100);
  EXPECT_TRUE(has(table, "title=\"the task has no run directory (it never started)\""));
}

// The histograms count every counted speedup once, slower bars below 1x and faster ones from 1x.
TEST(SuitePage, HistogramsCountEveryCountedTask) {
  auto s = hundred();
  auto v = make_suite_view(s, "/x");
  auto eager = speedup_histogram(v.speedup_eager, "speedup-eager", "t", "x");
  ASSERT_TRUE(eager);
  double n = 0;
  for (const auto& series : eager->bars)
    for (const auto& b : series.bars) {
      n += b.y;
      if (series.css_class == "slower") EXPECT_LE(b.x1, 1.0);
      else EXPECT_GE(b.x0, 1.0);
    }
  EXPECT_EQ(n, s.over_eager.counted);
  std::string page = render_suite_page(v);
  std::string svg = element(page, "svg", "speedup-eager");
  double drawn = 0;
  for (const char* cls : {"slower", "faster"})
    for (double y : values(svg, cls, "y")) drawn += y;
  EXPECT_EQ(drawn, s.over_eager.counted);
  auto sol = sol_histogram(v);
  ASSERT_TRUE(sol);
  double sols = 0;
  for (const auto& b : sol->bars[0].bars) sols += b.y;
  int with_sol = 0;
  for (const auto& t : s.tasks) with_sol += t.verdict == TaskVerdict::correct && t.sol_pct.has_value();
  EXPECT_EQ(sols, with_sol);
  EXPECT_GT(sol->x.max.value_or(0), 100);  // the synthetic suite has a SOL above 100%
  auto cost = cost_chart(v);
  ASSERT_TRUE(cost);
  size_t bars = cost->bars[0].bars.size() + cost->bars[1].bars.size();
  EXPECT_EQ(bars, static_cast<size_t>(std::count_if(s.tasks.begin(), s.tasks.end(), [](auto& t) { return t.cost_usd > 0; })));
  EXPECT_TRUE(has(page, "id=\"sol\""));
  EXPECT_TRUE(has(page, "id=\"cost\""));
}

TEST(SuitePage, BaselinesOnlySuiteShowsTheFloorAndTheBestPossibleSpeedup) {
  auto s = bench::summarize("baselines", "", fixtures::synthetic_tasks(40, true));
  std::string page = render_suite_page(make_suite_view(s, "/suites/base"));
  EXPECT_TRUE(has(page, "baselines only (no optimize runs)"));
  EXPECT_FALSE(has(page, "fast-p-curve"));
  EXPECT_FALSE(has(page, "(no run page)"));
  EXPECT_TRUE(has(page, "id=\"physics\""));
  EXPECT_TRUE(has(page, "id=\"compile-over-eager\""));
  std::string table = element(page, "table", "tasks");
  EXPECT_EQ(count(table, "<tbody><tr>"), 40);
  EXPECT_TRUE(has(table, "<th>eager/floor</th>"));
  EXPECT_TRUE(has(card(page, "physics"), bench::format_speedup(s.physics_geomean)));
  auto v = make_suite_view(s, "/suites/base");
  double n = 0;
  for (const auto& b : v.physics) n += b.tasks.size();
  EXPECT_EQ(n, s.measured);  // every measured problem has both an eager time and a floor here
}

// bench --baselines-only --device cpu records no floor (the roofline is a GPU's): the page then shows no
// roofline figure at all, not a card, a chart and three columns of dashes.
TEST(SuitePage, ABaselinesSuiteWithoutFloorsShowsNoRooflineFigures) {
  auto tasks = fixtures::synthetic_tasks(12, true);
  for (auto& t : tasks) {
    t.floor_ms.reset();
    t.floor_bound.clear();
    t.device = "cpu";
  }
  auto s = bench::summarize("baselines", "", tasks);
  ASSERT_FALSE(bench::has_roofline(s));
  std::string page = render_suite_page(make_suite_view(s, "/suites/cpu"));
  EXPECT_FALSE(has(page, "id=\"physics\"")) << "no best-possible card and no eager / floor histogram";
  EXPECT_TRUE(has(page, "id=\"compile-over-eager\""));
  EXPECT_TRUE(has(page, "No roofline figures"));
  std::string table = element(page, "table", "tasks");
  EXPECT_EQ(count(table, "<tbody><tr>"), 12);
  EXPECT_FALSE(has(table, "floor"));
  EXPECT_FALSE(has(table, "<th>bound</th>"));
  EXPECT_TRUE(has(table, "<th>GFLOP</th>"));
}

TEST(SuitePage, UntrustedTextIsEscapedAndAnEmptySuiteRenders) {
  bench::TaskRecord r;
  r.name = "x<script>alert(1)</script>";
  r.verdict = TaskVerdict::problem_error;
  r.detail = "<img src=x onerror=alert(1)>";
  std::string page = render_suite_page(make_suite_view(bench::summarize("optimize", "a<b", {r}), "/s"));
  EXPECT_FALSE(has(page, "<script>alert"));
  EXPECT_FALSE(has(page, "<img"));
  EXPECT_TRUE(has(page, "&lt;img src=x"));
  EXPECT_TRUE(has(page, "No correct task has an eager time yet."));
  std::string empty = render_suite_page(make_suite_view(bench::summarize("optimize", "x", {}), "/s"));
  EXPECT_TRUE(has(empty, "id=\"fast-p-curve\""));
}
