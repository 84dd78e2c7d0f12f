#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "report/html.h"

namespace cutegen::svg {
namespace {

constexpr double kLeft = 64, kRight = 20, kTop = 44, kBottom = 40;  // the legend sits above the plot
constexpr double kBand = 18;  // the band for off-scale points, above the plot

struct Range {
  double lo, hi;
  Scale scale;
};

// The data range padded a little (a log axis to whole decades' neighbours), never empty.
Range make_range(const Axis& a, std::vector<double> values) {
  if (a.scale == Scale::log)
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !(v > 0); }), values.end());
  double lo = values.empty() ? (a.scale == Scale::log ? 0.1 : 0) : *std::min_element(values.begin(), values.end());
  double hi = values.empty() ? 1 : *std::max_element(values.begin(), values.end());
  if (a.scale == Scale::log) {
    if (hi <= lo) { lo /= 2; hi *= 2; }
    lo = std::pow(10, std::floor(std::log10(lo) * 4 - 0.5) / 4);  // a quarter decade of room
    hi = std::pow(10, std::ceil(std::log10(hi) * 4 + 0.5) / 4);
  } else {
    if (hi <= lo) { hi = lo + std::max(1.0, std::fabs(lo)); }
    double pad = (hi - lo) * 0.08;
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  }
  if (a.min) lo = *a.min;
  if (a.max) hi = *a.max;
  return {lo, hi, a.scale};
}

double frac(const Range& r, double v) {
  if (r.scale == Scale::log) {
    v = std::max(v, std::numeric_limits<double>::min());
    return (std::log10(v) - std::log10(r.lo)) / (std::log10(r.hi) - std::log10(r.lo));
  }
  return (v - r.lo) / (r.hi - r.lo);
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

std::string marker(Marker m, double x, double y, const std::string& color) {
  switch (m) {
    case Marker::dot:
      return fmt::format("cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1\"", num(x), num(y),
                         color);
    case Marker::ring:
      return fmt::format("cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"2\"", num(x), num(y),
                         color);
    case Marker::square:
      return fmt::format("x=\"{}\" y=\"{}\" width=\"8\" height=\"8\" fill=\"{}\"", num(x - 4), num(y - 4), color);
    case Marker::cross:
      return fmt::format("d=\"M{0} {1}L{2} {3}M{0} {3}L{2} {1}\" stroke=\"{4}\" stroke-width=\"2.2\" fill=\"none\"",
                         num(x - 4.5), num(y - 4.5), num(x + 4.5), num(y + 4.5), color);
  }
  return "";
}

const char* marker_element(Marker m) {
  switch (m) {
    case Marker::dot:
    case Marker::ring: return "circle";
    case Marker::square: return "rect";
    case Marker::cross: return "path";
  }
  return "circle";
}

}  // namespace

Scale pick_scale(const std::vector<double>& values, double ratio) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (double v : values) {
    if (!(v > 0)) return Scale::linear;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return !values.empty() && hi / lo > ratio ? Scale::log : Scale::linear;
}

std::vector<double> ticks(double lo, double hi, Scale scale, bool integer) {
  std::vector<double> out;
  if (!(hi > lo)) return {lo};
  if (scale == Scale::log) {
    int d0 = static_cast<int>(std::floor(std::log10(lo))), d1 = static_cast<int>(std::ceil(std::log10(hi)));
    const bool few = d1 - d0 <= 2;
    for (int d = d0; d <= d1; ++d)
      for (double m : few ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        double v = m * std::pow(10, d);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
      }
    return out;
  }
  double raw = (hi - lo) / 6, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) { step = m * mag; break; }
  if (integer) step = std::max(1.0, std::round(step));
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::string tick_label(double v) {
  double a = std::fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e6)) return fmt::format("{:.2g}", v);
  std::string s = fmt::format("{:.3g}", v);
  if (s.find('e') != std::string::npos) s = fmt::format("{:.0f}", v);
  return s;
}

std::string render(const Chart& c) {
  std::vector<double> xs, ys;
  bool band = false;
  for (const auto& s : c.series) {
    bool on_band = std::find(c.band_top_classes.begin(), c.band_top_classes.end(), s.css_class) != c.band_top_classes.end();
    band = band || (on_band && !s.data.empty());
    for (const auto& p : s.data) {
      xs.push_back(p.x);
      if (!on_band) ys.push_back(p.y);
    }
  }
  for (const auto& b : c.bars)
    for (const auto& bar : b.bars) {
      xs.insert(xs.end(), {bar.x0, bar.x1});
      ys.insert(ys.end(), {0.0, bar.y});
    }
  for (const auto& h : c.hlines) ys.push_back(h.y);
  for (const auto& v : c.vlines) xs.push_back(v.x);
  const Range rx = make_range(c.x, xs), ry = make_range(c.y, ys);
  const double top = kTop + (band ? kBand : 0);
  const double pw = c.width - kLeft - kRight, ph = c.height - top - kBottom;
  auto px = [&](double v) { return kLeft + frac(rx, v) * pw; };
  auto py = [&](double v) { return top + (1 - frac(ry, v)) * ph; };
  auto inside_x = [&](double v) { double f = frac(rx, v); return f >= -1e-9 && f <= 1 + 1e-9; };
  auto inside_y = [&](double v) { double f = frac(ry, v); return f >= -1e-9 && f <= 1 + 1e-9; };

  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\"{} viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\" data-x-scale=\"{}\" data-y-scale=\"{}\">",
      c.id.empty() ? "" : " id=\"" + html::escape(c.id) + "\"", c.width, c.height, html::escape(c.title),
      rx.scale == Scale::log ? "log" : "linear", ry.scale == Scale::log ? "log" : "linear");
  o += fmt::format("<title>{}</title>", html::escape(c.title));
  o += fmt::format("<text class=\"title\" x=\"{}\" y=\"18\">{}</text>", kLeft, html::escape(c.title));
  o += fmt::format("<clipPath id=\"{}-clip\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>",
                   html::escape(c.id), kLeft, num(top), num(pw), num(ph));

  // Grid and ticks.
  o += "<g class=\"grid\">";
  for (double t : ticks(rx.lo, rx.hi, rx.scale, c.x.integer))
    o += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>", num(px(t)), num(top), num(top + ph));
  for (double t : ticks(ry.lo, ry.hi, ry.scale, c.y.integer))
    o += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>", kLeft, num(kLeft + pw), num(py(t)));
  o += "</g><g class=\"axis\">";
  o += fmt::format("<path d=\"M{0} {1}V{2}H{3}\" fill=\"none\"/>", kLeft, num(top), num(top + ph), num(kLeft + pw));
  o += "</g><g class=\"tick\">";
  for (double t : ticks(rx.lo, rx.hi, rx.scale, c.x.integer))
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>", num(px(t)), num(top + ph + 15),
                     tick_label(t), html::escape(c.x.unit));
  for (double t : ticks(ry.lo, ry.hi, ry.scale, c.y.integer))
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}{}</text>", kLeft - 6, num(py(t) + 4),
                     tick_label(t), html::escape(c.y.unit));
  o += "</g>";
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(kLeft + pw / 2), c.height - 8,
                   html::escape(c.x.label));
  o += fmt::format("<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
                   num(top + ph / 2), html::escape(c.y.label));
  if (band)
    o += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft - 6,
                     num(kTop + kBand / 2 + 3), html::escape(c.band_label));

  // Reference lines, labelled at their right end.
  o += fmt::format("<g class=\"ref\" clip-path=\"url(#{}-clip)\">", html::escape(c.id));
  for (const auto& h : c.hlines) {
    if (!inside_y(h.y)) continue;
    o += fmt::format("<line class=\"hline {0}\" data-y=\"{1}\" x1=\"{2}\" x2=\"{3}\" y1=\"{4}\" y2=\"{4}\" "
                     "stroke=\"{5}\" stroke-dasharray=\"6 4\" stroke-width=\"1.3\"/>",
                     html::escape(h.css_class), h.y, kLeft, num(kLeft + pw), num(py(h.y)), h.color);
  }
  for (const auto& v : c.vlines) {
    if (!inside_x(v.x)) continue;
    o += fmt::format("<line class=\"vline {0}\" data-x=\"{1}\" x1=\"{2}\" x2=\"{2}\" y1=\"{3}\" y2=\"{4}\" "
                     "stroke=\"{5}\" stroke-dasharray=\"3 3\" stroke-width=\"1.3\"/>",
                     html::escape(v.css_class), v.x, num(px(v.x)), num(top), num(top + ph), v.color);
  }
  o += "</g><g class=\"ref\">";
  // Labels above their lines at the left end (a run's first attempts are its slowest, so the space
  // above the baselines there is usually free), pushed apart where lines lie close (eager and torch.compile often do).
  std::vector<std::pair<double, std::string>> labels;
  for (const auto& h : c.hlines)
    if (inside_y(h.y)) labels.emplace_back(py(h.y) - 4, h.label);
  std::sort(labels.begin(), labels.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 1; i < labels.size(); ++i)
    labels[i].first = std::min(labels[i].first, labels[i - 1].first - 12);
  for (const auto& [y, text] : labels)
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", num(kLeft + 4), num(y), html::escape(text));
  for (const auto& v : c.vlines)
    if (inside_x(v.x))
      o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", num(px(v.x) + 4), num(top + 12), html::escape(v.label));
  o += "</g>";

  // Bars, with a pixel of space between neighbours.
  for (const auto& b : c.bars) {
    o += fmt::format("<g class=\"bars {}\">", html::escape(b.css_class));
    for (const auto& bar : b.bars) {
      double x0 = px(bar.x0), x1 = px(bar.x1), y = py(bar.y), base = py(std::max(ry.lo, 0.0));
      double w = std::max(1.0, x1 - x0 - 1.5);
      o += fmt::format("<rect class=\"bar {}\" data-x0=\"{}\" data-x1=\"{}\" data-y=\"{}\" x=\"{}\" y=\"{}\" "
                       "width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
                       html::escape(b.css_class), bar.x0, bar.x1, bar.y, num(x0 + 0.75), num(y), num(w),
                       num(std::max(0.0, base - y)), b.color, html::escape(bar.tooltip));
    }
    o += "</g>";
  }

  // Lines, then points on top.
  for (const auto& s : c.series) {
    if ((!s.line && !s.step_line) || s.data.size() < 2) continue;
    std::string d;
    for (std::size_t i = 0; i < s.data.size(); ++i) {
      const auto& p = s.data[i];
      if (i == 0) d += fmt::format("M{} {}", num(px(p.x)), num(py(p.y)));
      else if (s.step_line) d += fmt::format("H{}V{}", num(px(p.x)), num(py(p.y)));
      else d += fmt::format("L{} {}", num(px(p.x)), num(py(p.y)));
    }
    o += fmt::format("<path class=\"line {}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{} "
                     "clip-path=\"url(#{}-clip)\"/>",
                     html::escape(s.css_class), d, s.color, s.dashed ? " stroke-dasharray=\"5 4\"" : "",
                     html::escape(c.id));
  }
  for (const auto& s : c.series) {
    if (!s.points) continue;
    bool on_band = std::find(c.band_top_classes.begin(), c.band_top_classes.end(), s.css_class) != c.band_top_classes.end();
    o += fmt::format("<g class=\"series {}\">", html::escape(s.css_class));
    for (const auto& p : s.data) {
      double x = px(p.x), y = on_band ? kTop + kBand / 2 : py(p.y);
      o += fmt::format("<{} class=\"pt {}\" data-x=\"{}\" data-y=\"{}\" {}><title>{}</title></{}>",
                       marker_element(s.marker), html::escape(s.css_class), p.x, on_band ? std::string() : fmt::format("{}", p.y),
                       marker(s.marker, x, y, s.color), html::escape(p.tooltip), marker_element(s.marker));
      if (!p.label.empty())
        o += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\">{}</text>", num(x + 7), num(y - 6), html::escape(p.label));
    }
    o += "</g>";
  }

  // Legend above the plot, right-aligned.
  double lx = kLeft + pw;
  std::string legend;
  for (auto it = c.series.rbegin(); it != c.series.rend(); ++it) {
    if (it->name.empty()) continue;
    double w = 24 + 7.0 * it->name.size();
    lx -= w;
    double cy = 32;
    std::string sym = it->points ? fmt::format("<{} {}/>", marker_element(it->marker),
                                               marker(it->marker, lx + 6, cy, it->color))
                                 : fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" "
                                               "stroke-width=\"2\"/>",
                                               num(lx), num(lx + 12), num(cy), it->color);
    legend = fmt::format("<g class=\"legend-item\">{}<text x=\"{}\" y=\"{}\">{}</text></g>", sym, num(lx + 15),
                         num(cy + 4), html::escape(it->name)) + legend;
  }
  for (auto it = c.bars.rbegin(); it != c.bars.rend(); ++it) {
    if (it->name.empty()) continue;
    lx -= 24 + 7.0 * it->name.size();
    legend = fmt::format("<g class=\"legend-item\"><rect x=\"{}\" y=\"26\" width=\"11\" height=\"11\" fill=\"{}\"/>"
                         "<text x=\"{}\" y=\"36\">{}</text></g>",
                         num(lx), it->color, num(lx + 15), html::escape(it->name)) + legend;
  }
  o += "<g class=\"legend\">" + legend + "</g>";
  return o + "</svg>";
}

}  // namespace cutegen::svg
