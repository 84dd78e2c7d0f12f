#include "report/run_page.h"

#include <gtest/gtest.h>

#include <regex>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/json_text.h"
#include "common/testdata/test_helpers.h"
#include "report/run_report.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {
using cutegen::testing::count;

const fs::path kFixture = fs::path(CUTEGEN_REPORT_TESTDATA) / "relu-run";

RunView fixture() {
  auto v = load_run_view(kFixture);
  if (!v) throw std::runtime_error(v.error().message);
  return *v;
}

std::vector<std::pair<double, double>> points(const svg::Chart& c, const std::string& css_class) {
  std::vector<std::pair<double, double>> out;
  for (const auto& s : c.series)
    if (s.css_class == css_class)
      for (const auto& p : s.data) out.emplace_back(p.x, p.y);
  return out;
}


// The <tr> cells of the steps table, tags stripped.
std::vector<std::vector<std::string>> step_rows(const std::string& page) {
  auto begin = page.find("<table id=\"steps\">");
  auto end = page.find("</table>", begin);
  std::string table = page.substr(begin, end - begin);
  std::vector<std::vector<std::string>> rows;
  std::regex row("<tr>(.*?)</tr>"), cell("<td[^>]*>(.*?)</td>");
  for (auto r = std::sregex_iterator(table.begin(), table.end(), row); r != std::sregex_iterator(); ++r) {
    std::string inner = (*r)[1];
    std::vector<std::string> cells;
    for (auto c = std::sregex_iterator(inner.begin(), inner.end(), cell); c != std::sregex_iterator(); ++c)
      cells.push_back((*c)[1]);
    if (!cells.empty()) rows.push_back(cells);  // the header row has <th> cells
  }
  return rows;
}

}  // namespace

TEST(RunPage, TheTrajectoryHasEveryAttemptWhereItBelongs) {
  svg::Chart c = trajectory_chart(fixture());
  using P = std::vector<std::pair<double, double>>;
  EXPECT_EQ(points(c, "accepted"), (P{{2, 1.8412}, {3, 0.5427}, {6, 0.5262}}));
  EXPECT_EQ(points(c, "rolled-back"), (P{{4, 1.1196}}));
  ASSERT_EQ(points(c, "failed").size(), 2u);
  EXPECT_EQ(points(c, "failed")[0].first, 1);
  EXPECT_EQ(points(c, "failed")[1].first, 5);
  EXPECT_EQ(points(c, "best"), (P{{2, 1.8412}, {3, 0.5427}, {6, 0.5262}, {6.5, 0.5262}}));
  ASSERT_EQ(c.hlines.size(), 3u);
  EXPECT_EQ(c.hlines[0].y, 0.5573);
  EXPECT_EQ(c.hlines[1].y, 0.5561);
  EXPECT_NEAR(c.hlines[2].y, 0.4994, 1e-4);
  ASSERT_EQ(c.vlines.size(), 1u);
  EXPECT_EQ(c.vlines[0].x, 3.5) << "profiles began with step 2, whose first attempt is the 4th";
  EXPECT_EQ(c.y.scale, svg::Scale::linear) << "0.5 to 1.8 ms is not a wide range";
}

TEST(RunPage, TheRooflineChartPlacesKernelsUnderTheCeilings) {
  std::string why;
  auto c = roofline_chart(fixture(), why);
  ASSERT_TRUE(c) << why;
  const double ai = 268435456.0 / 2147483648.0;
  auto kernels = points(*c, "accepted");
  ASSERT_EQ(kernels.size(), 3u);
  for (auto [x, y] : kernels) EXPECT_DOUBLE_EQ(x, ai);
  EXPECT_NEAR(kernels[2].second, 268435456.0 / (0.5262 * 1e6), 1e-9) << "GFLOP/s of the best kernel";
  EXPECT_LT(kernels[2].second, 4300 * ai) << "below the bandwidth slope, as SOL < 100%";
  EXPECT_EQ(points(*c, "baseline").size(), 2u);
  auto slope = points(*c, "ceiling-memory"), roof = points(*c, "ceiling-compute");
  ASSERT_EQ(slope.size(), 2u);
  ASSERT_EQ(roof.size(), 2u);
  EXPECT_NEAR(roof[0].second, 51200, 1e-6) << "the fp32 rate behind the floor's compute time";
  EXPECT_NEAR(slope[1].first, 51200 / 4300.0, 1e-9) << "the ridge point";

  RunView v = fixture();
  v.summary.floor->compute_ms = 0;
  EXPECT_FALSE(roofline_chart(v, why));
  EXPECT_NE(why.find("cutegen calibrate"), std::string::npos) << why;
}

TEST(RunPage, TheStepTableShowsTheLoggedValues) {
  std::string page = render_run_page(fixture());
  auto rows = step_rows(page);
  ASSERT_EQ(rows.size(), 5u) << "the first kernel and four steps";
  EXPECT_EQ(rows[0][0], "synthesis");
  EXPECT_EQ(rows[0][4], "1.8412 ms");
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "128-bit vectorized accesses with 4 independent loads per thread, 8 CTAs per SM",
                                               "accepted", "pass", "0.5427 ms", "3.39x", "1.03x", ""}));
  EXPECT_EQ(rows[2][2], "slower");
  EXPECT_EQ(rows[2][7], "needed more than the noise, 0.0109 ms");
  EXPECT_EQ(rows[3][2], "undone");
  EXPECT_EQ(rows[3][3], "mismatch");
  EXPECT_EQ(rows[3][4], "-");
  EXPECT_EQ(rows[4][4], "0.5262 ms");
  EXPECT_EQ(rows[4][5], "1.03x");
  EXPECT_EQ(rows[4][6], "1.06x");
  EXPECT_EQ(count(page, "diff against"), 4);
  EXPECT_NE(page.find("<span class=\"add\">+      __stcs("), std::string::npos);
}

TEST(RunPage, HeaderNumbersAreTheOnesReportMdShows) {
  RunView v = fixture();
  std::string page = render_run_page(v), md = render_run_report(v.summary);
  EXPECT_NE(md.find("Best kernel: 0.5262 ms"), std::string::npos) << md;
  EXPECT_NE(page.find("<div class=\"v\">0.5262 ms</div>"), std::string::npos);
  EXPECT_NE(md.find("Speedup over eager: 1.06x; over torch.compile: 1.06x. 94.9% of the roofline floor"),
            std::string::npos)
      << md;
  EXPECT_NE(page.find("<div id=\"speedup-eager\"><div class=\"k\">over eager</div><div class=\"v\">1.06x</div>"),
            std::string::npos);
  EXPECT_NE(page.find("<div class=\"v\">94.9%</div>"), std::string::npos);
  EXPECT_NE(md.find(fmt::format("{} tokens, ${:.4f}", v.summary.tokens, v.summary.cost_usd)), std::string::npos) << md;
  // The cached share of the input, from the usage the log recorded.
  EXPECT_GT(v.summary.input_tokens, 0);
  EXPECT_NE(md.find(fmt::format("Input tokens: {}, of which {} (", v.summary.input_tokens, v.summary.cached_input_tokens)),
            std::string::npos)
      << md;
  EXPECT_NE(page.find(fmt::format("<div class=\"v\">{} tokens</div>", v.summary.tokens)), std::string::npos);
  EXPECT_NE(page.find(fmt::format("9 calls · ${:.4f}", v.summary.cost_usd)), std::string::npos);
  EXPECT_NE(page.find("<b>Stopped:</b> step limit reached."), std::string::npos);
  EXPECT_NE(page.find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"trajectory\""), std::string::npos);
  EXPECT_NE(page.find("id=\"roofline\""), std::string::npos);
  EXPECT_NE(page.find("first shown in step 2&#39;s prompt"), std::string::npos);
}

TEST(RunPage, UntrustedTextAppearsAsText) {
  RunView v = fixture();
  v.steps[0].record.idea = "<script>alert('idea')</script>";
  v.steps[2].record.evidence = "</pre><img src=x onerror=alert(1)>";
  v.profiles[0].summary = "<b>profile</b>";
  v.attempts[0].evaluation.reason = "<svg onload=alert(2)>";
  v.summary.problem_name = "relu<script>";
  std::string page = render_run_page(v);
  EXPECT_NE(page.find("&lt;script&gt;alert(&#39;idea&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;profile&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(page.find("&lt;svg onload=alert(2)&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("onload=alert"), page.find("&lt;svg onload=alert") + 8);
  EXPECT_EQ(count(page, "<script"), 1) << "only the page's own script";
  EXPECT_EQ(count(page, "</script"), 1);
}

TEST(RunPage, ARunWithoutACorrectKernelStillRenders) {
  RunView v = fixture();
  v.summary.best.reset();
  v.best_attempt.reset();
  for (auto& a : v.attempts) a.fate = AttemptFate::failed;
  v.summary.floor.reset();
  std::string page = render_run_page(v);
  EXPECT_NE(page.find("no correct kernel"), std::string::npos);
  EXPECT_NE(page.find("id=\"no-roofline\""), std::string::npos);
}

TEST(RunPage, AStepThatNeededRepairsSaysHowMany) {
  RunView v = fixture();
  // As if step 4's kernel had failed once and passed after a repair.
  v.steps[3].attempts.insert(v.steps[3].attempts.begin(), 5);
  v.steps[3].record.note = "";
  auto rows = step_rows(render_run_page(v));
  EXPECT_EQ(rows[4][7], "1 repair round evaluated");
  EXPECT_EQ(rows[1][7], "");
}
