#pragma once
// Charts as inline SVG written by cutegen: scatter points, polylines, horizontal reference lines and
// vertical markers on linear or logarithmic axes with "nice" ticks. No chart library and no script,
// so a page renders from a file path with nothing fetched, and prints as vectors.
//
// Every data point is one element of class "pt" carrying its data coordinates (data-x, data-y) and
// its series' class, so tests (and readers of the DOM) find the numbers without reverse-mapping
// pixels.
#include <optional>
#include <string>
#include <vector>

namespace cutegen::svg {

enum class Scale { linear, log };

struct Axis {
  std::string label;
  Scale scale = Scale::linear;
  std::optional<double> min, max;  // from the data (and reference lines) when absent
  std::string unit;                // appended to tick labels ("ms")
  bool integer = false;            // ticks on whole numbers only (attempt numbers)
};

// The marker each point is drawn with.
enum class Marker { dot, ring, cross, square };

struct Point {
  double x = 0, y = 0;
  std::string tooltip;   // text (escaped when drawn), shown on hover
  std::string label;     // short text drawn beside the point ("" for none)
};

struct Series {
  std::string name;       // legend text
  std::string css_class;  // "accepted", "failed", ...; also the colour
  std::string color;
  Marker marker = Marker::dot;
  bool line = false;      // join the points (in the given order)
  bool step_line = false; // join them as a staircase (a best-so-far line)
  bool points = true;     // draw the points (false: a line only, e.g. a roofline ceiling)
  bool dashed = false;
  std::vector<Point> data;
};

// Bars for histograms and per-item charts: each spans [x0, x1) from 0 up to y (the y axis should be
// linear from 0). Drawn as <rect class="bar CLASS"> carrying data-x0, data-x1 and data-y.
struct Bar {
  double x0 = 0, x1 = 0, y = 0;
  std::string tooltip;    // text (escaped when drawn), shown on hover
};

struct BarSeries {
  std::string name;       // legend text
  std::string css_class;
  std::string color;
  std::vector<Bar> bars;
};

struct HLine {
  double y = 0;
  std::string label;      // drawn at the left end, above the line
  std::string css_class;
  std::string color = "#8a93a5";
};

struct VLine {
  double x = 0;
  std::string label;      // drawn at the top, right of the line
  std::string css_class;
  std::string color = "#6639ba";
};

struct Chart {
  std::string id;
  std::string title;
  int width = 560, height = 340;
  Axis x, y;
  std::vector<Series> series;
  std::vector<BarSeries> bars;  // drawn under the series
  std::vector<HLine> hlines;
  std::vector<VLine> vlines;
  // Points whose value is off the chart's scale (a failed attempt has no time) can sit on a band at
  // the top: series with `band_top` set are drawn there at their x, ignoring y.
  std::vector<std::string> band_top_classes;
  std::string band_label;  // the band's name, drawn at its left
};

// Log axes when the data span more than `ratio` (max/min > ratio, all positive): a run that went from
// 30 ms to 0.3 ms is unreadable on a linear axis.
Scale pick_scale(const std::vector<double>& values, double ratio = 20);

// Tick positions for [lo, hi]: 1-2-5 steps (linear), or decades with 2 and 5 between when few (log).
std::vector<double> ticks(double lo, double hi, Scale scale, bool integer = false);

// A number as a tick label: 3 significant digits, no exponent for 1e-3..1e6.
std::string tick_label(double v);

std::string render(const Chart& chart);

}  // namespace cutegen::svg
