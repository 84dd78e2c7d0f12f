#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <regex>

#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {
using cutegen::testing::count;


}  // namespace

TEST(SvgChart, LinearTicksAreRoundNumbers) {
  EXPECT_EQ(svg::ticks(0, 1, svg::Scale::linear), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  EXPECT_EQ(svg::ticks(0.5, 6.5, svg::Scale::linear, true), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(svg::ticks(0.5, 2.5, svg::Scale::linear, true), (std::vector<double>{1, 2})) << "attempts are whole";
}

TEST(SvgChart, LogTicksAreDecadesWithTwoAndFiveWhenFew) {
  EXPECT_EQ(svg::ticks(0.1, 10, svg::Scale::log), (std::vector<double>{0.1, 0.2, 0.5, 1, 2, 5, 10}));
  EXPECT_EQ(svg::ticks(1, 1e6, svg::Scale::log), (std::vector<double>{1, 10, 100, 1000, 1e4, 1e5, 1e6}));
}

TEST(SvgChart, LogScaleOnlyWhenTheRangeIsWide) {
  EXPECT_EQ(svg::pick_scale({0.5, 1.84, 0.55}), svg::Scale::linear);
  EXPECT_EQ(svg::pick_scale({30, 0.3}), svg::Scale::log);
  EXPECT_EQ(svg::pick_scale({30, 0}), svg::Scale::linear) << "a log axis cannot show zero";
  EXPECT_EQ(svg::tick_label(0.5), "0.5");
  EXPECT_EQ(svg::tick_label(100000), "100000");
  EXPECT_EQ(svg::tick_label(1500), "1500");
  EXPECT_EQ(svg::tick_label(1e7), "1e+07");
  EXPECT_EQ(svg::tick_label(0.0001), "0.0001");
}

TEST(SvgChart, EveryPointCarriesItsDataAndEscapedText) {
  svg::Chart c{.id = "t", .title = "A <b>title</b>"};
  c.series.push_back({.name = "ok", .css_class = "accepted", .data = {{.x = 1, .y = 2.5, .tooltip = "one <x>"},
                                                                       {.x = 2, .y = 1.25, .label = "best"}}});
  c.series.push_back({.name = "bad", .css_class = "failed", .marker = svg::Marker::cross, .data = {{.x = 3, .y = 0}}});
  c.band_top_classes = {"failed"};
  c.hlines.push_back({.y = 2, .label = "eager 2 ms", .css_class = "eager"});
  c.hlines.push_back({.y = 1e6, .label = "far away", .css_class = "off"});
  c.vlines.push_back({.x = 1.5, .label = "profiles", .css_class = "profiling"});
  std::string s = svg::render(c);
  EXPECT_EQ(count(s, "class=\"pt accepted\""), 2) << s;
  EXPECT_EQ(count(s, "class=\"pt failed\""), 1);
  EXPECT_NE(s.find("data-x=\"1\" data-y=\"2.5\""), std::string::npos) << s;
  EXPECT_NE(s.find("data-x=\"2\" data-y=\"1.25\""), std::string::npos) << s;
  EXPECT_NE(s.find("data-x=\"3\" data-y=\"\""), std::string::npos) << "a band point has no value";
  EXPECT_NE(s.find("<title>one &lt;x&gt;</title>"), std::string::npos);
  EXPECT_NE(s.find("A &lt;b&gt;title&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(s.find("<b>"), std::string::npos);
  EXPECT_NE(s.find("class=\"hline eager\" data-y=\"2\""), std::string::npos);
  EXPECT_NE(s.find("class=\"vline profiling\" data-x=\"1.5\""), std::string::npos);
  EXPECT_NE(s.find(">best</text>"), std::string::npos);
}

TEST(SvgChart, HigherValuesAreDrawnHigher) {
  svg::Chart c{.id = "t"};
  c.series.push_back({.css_class = "p", .data = {{.x = 1, .y = 10}, {.x = 2, .y = 1000}}});
  c.y.scale = svg::Scale::log;
  std::string s = svg::render(c);
  std::vector<double> cy;
  const std::regex pt("class=\"pt p\"[^>]*cy=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), pt);
       it != std::sregex_iterator(); ++it)
    cy.push_back(std::stod((*it)[1]));
  ASSERT_EQ(cy.size(), 2u) << s;
  EXPECT_GT(cy[0], cy[1]) << "SVG y grows downwards";
  EXPECT_NE(s.find("data-y-scale=\"log\""), std::string::npos);
}

// Histogram bars: one rect per bar from the zero line up, carrying its span and height, the tooltip
// escaped, and a legend entry per named bar series.
TEST(SvgChart, BarsSpanTheirBinFromZero) {
  svg::Chart c;
  c.id = "h";
  c.width = 400;
  c.height = 300;
  c.x = {.label = "x", .min = 0, .max = 4};
  c.y = {.label = "n", .min = 0, .max = 10};
  c.bars = {{.name = "faster", .css_class = "faster", .color = "#0a0",
             .bars = {{.x0 = 1, .x1 = 2, .y = 5, .tooltip = "a<b"}, {.x0 = 2, .x1 = 3, .y = 10}}}};
  std::string out = svg::render(c);
  EXPECT_EQ(count(out, "<rect class=\"bar faster\""), 2);
  EXPECT_NE(out.find("data-x0=\"1\" data-x1=\"2\" data-y=\"5\""), std::string::npos) << out;
  EXPECT_NE(out.find("<title>a&lt;b</title>"), std::string::npos);
  EXPECT_NE(out.find(">faster</text>"), std::string::npos) << "legend";
  // Heights are proportional: the 10 bar is twice the 5 bar, both standing on the same baseline.
  std::regex re("data-y=\"(\\d+)\" x=\"[^\"]+\" y=\"([^\"]+)\" width=\"[^\"]+\" height=\"([^\"]+)\"");
  std::vector<std::pair<double, double>> geo;  // (top, height)
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it)
    geo.emplace_back(std::stod((*it)[2]), std::stod((*it)[3]));
  ASSERT_EQ(geo.size(), 2u);
  EXPECT_NEAR(geo[1].second, 2 * geo[0].second, 0.2);
  EXPECT_NEAR(geo[0].first + geo[0].second, geo[1].first + geo[1].second, 0.1);
}
