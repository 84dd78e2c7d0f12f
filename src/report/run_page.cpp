#include "report/run_page.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "report/html.h"

namespace cutegen {
namespace {

constexpr const char* kGreen = "#1a7f37";
constexpr const char* kAmber = "#b26a00";
constexpr const char* kRed = "#c62828";
constexpr const char* kBlue = "#1f5fbf";
constexpr const char* kGrey = "#5b6475";
constexpr const char* kPurple = "#6639ba";

// The same formats report.md uses, so a number reads the same in both.
std::string ms(double v) { return fmt::format("{:.4f} ms", v); }
std::string times(std::optional<double> v) { return v ? fmt::format("{:.2f}x", *v) : "n/a"; }
std::string pct(std::optional<double> v) { return v ? fmt::format("{:.1f}%", *v) : "n/a"; }
std::string dollars(double v) { return fmt::format("${:.4f}", v); }
std::string seconds(double s) {
  if (s >= 3600) return fmt::format("{}h {:02}m", static_cast<int>(s / 3600), static_cast<int>(std::fmod(s, 3600) / 60));
  if (s >= 60) return fmt::format("{}m {:02}s", static_cast<int>(s / 60), static_cast<int>(std::fmod(s, 60)));
  return fmt::format("{:.1f} s", s);
}

std::string css(std::string_view word) {
  std::string c(word);
  std::replace(c.begin(), c.end(), ' ', '-');
  return c;
}

// step3-c2-repair1 -> "step 3, candidate 2, repair 1"; tune3 -> "tuning after step 3"; synthesis stays.
std::string attempt_name(const Attempt& a) {
  const AttemptLabel& l = a.of;
  if (l.stage == AttemptStage::tune) return l.step == 0 ? "tuning of the first kernel" : fmt::format("tuning after step {}", l.step);
  std::string s = l.stage == AttemptStage::step ? fmt::format("step {}", l.step) : std::string(to_string(l.stage));
  if (l.candidate > 0) s += fmt::format(", candidate {}", l.candidate);
  if (l.repair > 0) s += fmt::format(", repair {}", l.repair);
  return s;
}

// A step's candidates (--candidates): the menu item each was asked for, what it tried, what became of it.
std::string candidates_table(const StepRecord& r) {
  html::Table t;
  t.css_class = "candidates";
  t.headers = {"#", "menu item", "optimisation", "what became of it", "screened", "note"};
  for (const auto& c : r.candidates)
    t.rows.push_back({html::number_cell(std::to_string(c.n), c.n), html::text_cell(c.item), html::text_cell(c.idea),
                      html::text_cell(std::string(to_string(c.outcome)) + (c.verdict ? " (" + to_string(*c.verdict) + ")" : ""),
                                      std::string(to_string(c.outcome))),
                      c.screened_ms ? html::number_cell(ms(*c.screened_ms), *c.screened_ms) : html::text_cell("-"),
                      html::text_cell(c.note)});
  return t.render();
}

std::optional<double> eager_ms(const RunView& v) { return v.summary.baselines.eager ? v.summary.baselines.eager->median_ms() : std::nullopt; }
std::optional<double> compile_ms(const RunView& v) {
  return v.summary.baselines.compile ? v.summary.baselines.compile->median_ms() : std::nullopt;
}

std::string card(std::string_view key, std::string_view value, std::string_view note = "", std::string_view id = "") {
  return fmt::format("<div{}><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"n\">{}</div></div>",
                     id.empty() ? "" : fmt::format(" id=\"{}\"", html::escape(id)), html::escape(key),
                     html::escape(value), html::escape(note));
}

std::string header(const RunView& v) {
  const RunSummary& s = v.summary;
  const ProblemFacts& p = *v.problem;
  std::string o = fmt::format("<h1>cutegen run: {}</h1>", html::escape(s.problem_name));
  o += fmt::format("<p class=\"sub\">{} · {} · {} precision · LLM {} · profiling {} · {}</p>",
                   html::escape(std::string(to_string(s.workload_class))), html::escape(p.dtype),
                   html::escape(v.precision.empty() ? "?" : v.precision), html::escape(s.llm.empty() ? "?" : s.llm),
                   html::escape(s.profile_policy.empty() ? "?" : s.profile_policy), html::escape(v.dir.filename().string()));
  o += "<div class=\"cards\" id=\"summary\">";
  o += card("GPU", p.gpu.empty() ? "?" : p.gpu);
  if (s.best) {
    const Evaluation& b = *s.best;
    o += card("best time", ms(b.median_ms()), fmt::format("noise {:.4f} ms", b.noise_ms()), "best-time");
    o += card("over eager", times(b.speedup_eager()), eager_ms(v) ? "eager " + ms(*eager_ms(v)) : "", "speedup-eager");
    o += card("over torch.compile", times(b.speedup_compile()), compile_ms(v) ? "compile " + ms(*compile_ms(v)) : "",
              "speedup-compile");
    o += card("SOL", pct(b.sol_pct()), s.floor ? "floor " + ms(s.floor->floor_ms) : "", "sol");
    o += card("verdict", to_string(b.verdict), v.best_attempt ? fmt::format("attempt {}", *v.best_attempt) : "", "verdict");
  } else {
    o += card("verdict", "no correct kernel", "", "verdict");
  }
  o += card("LLM", fmt::format("{} tokens", s.tokens), fmt::format("{} calls · {}", s.llm_calls, dollars(s.cost_usd)),
            "tokens");
  o += card("wall time", seconds(v.wall_seconds), fmt::format("{} evaluations", v.attempts.size()), "wall");
  o += "</div>";
  o += fmt::format("<p id=\"stopped\"><b>Stopped:</b> {}.", html::escape(stop_reason_text(s)));
  if (!s.example_shown.empty())
    o += fmt::format(" Example kernel shown to the LLM: <code>{}</code> (a first kernel close to it is no achievement "
                     "of the LLM's).",
                     html::escape(s.example_shown));
  o += "</p>";
  if (s.best && !s.best->roofline_warning.empty())
    o += fmt::format("<p class=\"warn\">Roofline warning: {}</p>", html::escape(s.best->roofline_warning));
  return o;
}

std::string step_label(int step) { return step == 0 ? "synthesis" : fmt::format("step {}", step); }

}  // namespace

svg::Chart trajectory_chart(const RunView& v) {
  svg::Chart c;
  c.id = "trajectory";
  c.title = "Time per attempt";
  c.x = {.label = "attempt (evaluations in the order the judge ran them)", .min = 0.5,
         .max = std::max<double>(1, v.attempts.size()) + 0.5, .integer = true};
  c.y.label = "median time per call (ms)";
  svg::Series accepted{.name = "accepted", .css_class = "accepted", .color = kGreen};
  svg::Series rolled{.name = "rolled back", .css_class = "rolled-back", .color = kAmber, .marker = svg::Marker::ring};
  svg::Series failed{.name = "failed", .css_class = "failed", .color = kRed, .marker = svg::Marker::cross};
  svg::Series best{.name = "best so far", .css_class = "best", .color = kGreen, .step_line = true, .points = false,
                   .dashed = true};
  std::vector<double> ys;
  for (const auto& a : v.attempts) {
    const Evaluation& e = a.evaluation;
    std::string tip = fmt::format("attempt {} ({}): ", a.index, attempt_name(a));
    if (!e.passed()) {
      failed.data.push_back({.x = double(a.index), .y = 0,
                             .tooltip = tip + to_string(e.verdict) + (e.reason.empty() ? "" : ": " + e.reason)});
      continue;
    }
    svg::Point p{.x = double(a.index), .y = e.median_ms(),
                 .tooltip = tip + ms(e.median_ms()) + ", " + std::string(to_string(a.fate))};
    ys.push_back(p.y);
    if (a.fate == AttemptFate::accepted) {
      p.label = a.tuning ? "tuned" : step_label(a.step);
      accepted.data.push_back(p);
      best.data.push_back({.x = p.x, .y = p.y});
    } else {
      rolled.data.push_back(p);
    }
  }
  if (!best.data.empty()) best.data.push_back({.x = double(v.attempts.size()) + 0.5, .y = best.data.back().y});
  auto line = [&](std::optional<double> y, std::string label, std::string cls, const char* color) {
    if (!y || !(*y > 0)) return;
    ys.push_back(*y);
    c.hlines.push_back({.y = *y, .label = label + " " + ms(*y), .css_class = std::move(cls), .color = color});
  };
  line(eager_ms(v), "eager", "eager", kGrey);
  line(compile_ms(v), "torch.compile", "compile", kBlue);
  line(v.summary.floor ? std::optional<double>(v.summary.floor->floor_ms) : std::nullopt, "roofline floor", "floor",
       kPurple);
  c.y.scale = svg::pick_scale(ys);
  if (v.first_profiled_step) {
    // Between the last attempt before that step and its first.
    int before = 0;
    for (const auto& a : v.attempts)
      if (a.step < *v.first_profiled_step) before = a.index;
    c.vlines.push_back({.x = before + 0.5, .label = fmt::format("profiles from step {}", *v.first_profiled_step),
                        .css_class = "profiling"});
  }
  c.series = {best, accepted, rolled, failed};
  c.band_top_classes = {"failed"};
  c.band_label = "failed";
  return c;
}

std::optional<svg::Chart> roofline_chart(const RunView& v, std::string& why_not) {
  const auto& floor = v.summary.floor;
  const ProblemFacts& p = *v.problem;
  if (!floor) {
    why_not = "the judge gave no roofline floor for this problem (run `cutegen calibrate` on the GPU)";
    return std::nullopt;
  }
  if (p.flops == 0 || p.min_bytes == 0) {
    why_not = "the problem's FLOPs or minimum bytes are unknown, so it has no arithmetic intensity";
    return std::nullopt;
  }
  double bw = floor->hbm_gbps > 0 ? floor->hbm_gbps : floor->memory_ms > 0 ? p.min_bytes / (floor->memory_ms * 1e6) : 0;
  double peak = floor->compute_ms > 0 ? p.flops / (floor->compute_ms * 1e6) : 0;  // GFLOP/s
  if (!(bw > 0) || !(peak > 0)) {
    why_not = "the calibrated ceilings are not in the run's floor (run `cutegen calibrate` on the GPU)";
    return std::nullopt;
  }
  const double ai = double(p.flops) / double(p.min_bytes);
  const double ridge = peak / bw;
  const double lo = std::min(ai, ridge) / 8, hi = std::max(ai, ridge) * 8;
  auto gflops = [&](double t_ms) { return p.flops / (t_ms * 1e6); };

  svg::Chart c;
  c.id = "roofline";
  c.title = "Roofline";
  c.x = {.label = "arithmetic intensity (FLOP per byte of the problem's minimum traffic)", .scale = svg::Scale::log};
  c.y = {.label = "achieved GFLOP/s", .scale = svg::Scale::log};
  svg::Series slope{.name = fmt::format("HBM {:.0f} GB/s", bw), .css_class = "ceiling-memory", .color = kPurple,
                    .line = true, .points = false};
  slope.data = {{.x = lo, .y = bw * lo}, {.x = ridge, .y = peak}};
  std::string rate = floor->rate.empty() ? "compute" : floor->rate;
  svg::Series roof{.name = fmt::format("{} {:.1f} TFLOP/s", rate, peak / 1000), .css_class = "ceiling-compute",
                   .color = kRed, .line = true, .points = false};
  roof.data = {{.x = ridge, .y = peak}, {.x = hi, .y = peak}};
  svg::Series kernels{.name = "accepted kernels", .css_class = "accepted", .color = kGreen};
  svg::Series baselines{.name = "baselines", .css_class = "baseline", .color = kBlue, .marker = svg::Marker::ring};
  double min_y = peak, max_y = peak;
  for (const auto& a : v.attempts) {
    if (a.fate != AttemptFate::accepted || !a.evaluation.passed() || !(a.evaluation.median_ms() > 0)) continue;
    double y = gflops(a.evaluation.median_ms());
    bool is_best = v.best_attempt && *v.best_attempt == a.index;
    kernels.data.push_back({.x = ai, .y = y,
                            .tooltip = fmt::format("{} (attempt {}): {} = {:.1f} GFLOP/s{}", step_label(a.step), a.index,
                                                   ms(a.evaluation.median_ms()), y,
                                                   a.evaluation.sol_pct() ? ", SOL " + pct(a.evaluation.sol_pct()) : ""),
                            .label = is_best ? "best" : ""});
    min_y = std::min(min_y, y);
    max_y = std::max(max_y, y);
  }
  for (auto [name, t] : {std::pair{"eager", eager_ms(v)}, std::pair{"torch.compile", compile_ms(v)}}) {
    if (!t || !(*t > 0)) continue;
    double y = gflops(*t);
    baselines.data.push_back({.x = ai, .y = y, .tooltip = fmt::format("{}: {} = {:.1f} GFLOP/s", name, ms(*t), y)});
    min_y = std::min(min_y, y);
  }
  min_y = std::min(min_y, bw * lo);
  c.x.min = lo;
  c.x.max = hi;
  c.y.min = std::pow(10, std::floor(std::log10(min_y)));
  c.y.max = std::pow(10, std::ceil(std::log10(max_y * 1.5)));
  c.vlines.push_back({.x = ai, .label = fmt::format("this problem: {:.3g} FLOP/B", ai), .css_class = "intensity",
                      .color = "#8a93a5"});
  c.series = {slope, roof, baselines, kernels};
  return c;
}

namespace {

std::string steps_section(const RunView& v) {
  html::Table t;
  t.id = "steps";
  t.headers = {"step", "idea", "outcome", "verdict", "time", "vs best before", "vs eager", "note and evidence"};
  auto eager = eager_ms(v);
  auto vs_eager = [&](std::optional<double> time) -> html::Cell {
    if (!time || !eager) return html::text_cell("-");
    return html::number_cell(times(*eager / *time), *eager / *time);
  };
  // The first kernel: where the steps start from.
  if (v.best_attempt || !v.attempts.empty()) {
    const Attempt* first = nullptr;
    for (const auto& a : v.attempts)
      if (a.step == 0 && !a.tuning && a.fate == AttemptFate::accepted) first = &a;
    if (first) {
      int tries = 0;
      for (const auto& a : v.attempts) tries += a.step == 0 && !a.tuning;
      t.rows.push_back({html::text_cell("synthesis"),
                        html::text_cell(fmt::format("first correct kernel ({} evaluation{}, {} synthesis attempt{})", tries,
                                                    tries == 1 ? "" : "s", v.summary.syntheses,
                                                    v.summary.syntheses == 1 ? "" : "s")),
                        html::text_cell("accepted", "accepted"), html::text_cell("pass"),
                        html::number_cell(ms(first->evaluation.median_ms()), first->evaluation.median_ms()),
                        html::text_cell("-"), vs_eager(first->evaluation.median_ms()), html::text_cell("")});
      t.detail_rows.push_back(first->source ? html::details("kernel source", html::pre(*first->source))
                                            : std::string());
    }
  }
  for (const auto& s : v.steps) {
    const StepRecord& r = s.record;
    // A step whose kernel needed repairs says how many: its time is the repaired kernel's.
    const int repairs = s.attempts.empty() ? 0 : static_cast<int>(s.attempts.size()) - 1;
    std::string note = repairs == 0 ? html::escape(r.note)
                                    : html::escape(fmt::format("{} repair round{} evaluated{}{}", repairs,
                                                               repairs == 1 ? "" : "s", r.note.empty() ? "" : "; ", r.note));
    const std::string label = r.kind == StepKind::tuning ? fmt::format("tuning after {}", r.n) : std::to_string(r.n);
    t.rows.push_back({html::text_cell(label), html::text_cell(r.idea),
                      html::text_cell(to_string(r.outcome), css(to_string(r.outcome))),
                      html::text_cell(r.verdict ? to_string(*r.verdict) : (r.time_ms ? "pass" : "-")),
                      r.time_ms ? html::number_cell(ms(*r.time_ms), *r.time_ms) : html::text_cell("-"),
                      r.speedup ? html::number_cell(times(r.speedup), *r.speedup) : html::text_cell("-"),
                      vs_eager(r.time_ms), html::Cell{note}});
    std::string detail;
    if (!r.candidates.empty()) detail += html::details(fmt::format("{} candidates", r.candidates.size()), candidates_table(r));
    if (!r.evidence.empty()) detail += html::details("judge's evidence", html::pre(r.evidence, "wrap"));
    if (!s.diff.empty())
      detail += html::details(fmt::format("diff against {} (+{} −{})",
                                          s.base ? html::escape(attempt_name(*v.attempt(*s.base))) : "the best",
                                          s.lines_added, s.lines_removed),
                              html::diff_block(s.diff));
    else if (!s.diff_missing.empty())
      detail += fmt::format("<span class=\"note\">no diff: {}</span>", html::escape(s.diff_missing));
    t.detail_rows.push_back(detail);
  }
  if (t.rows.empty()) return "<p>No kernel was accepted and no optimisation step ran.</p>";
  return t.render();
}

std::string attempts_section(const RunView& v) {
  html::Table t;
  t.id = "attempts";
  t.sortable = true;  // by verdict or time, to find the failures or the fastest
  t.headers = {"#", "attempt", "verdict", "time", "what became of it", "reason"};
  for (const auto& a : v.attempts) {
    const Evaluation& e = a.evaluation;
    t.rows.push_back({html::number_cell(std::to_string(a.index), a.index), html::text_cell(attempt_name(a)),
                      html::text_cell(to_string(e.verdict)),
                      e.passed() ? html::number_cell(ms(e.median_ms()), e.median_ms()) : html::text_cell("-"),
                      html::text_cell(to_string(a.fate), css(to_string(a.fate))), html::text_cell(e.reason)});
    t.detail_rows.push_back(!e.passed() && !e.evidence.empty() ? html::details("evidence", html::pre(e.evidence, "wrap"))
                                                               : std::string());
  }
  return t.render();
}

std::string profiles_section(const RunView& v) {
  if (v.profiles.empty())
    return fmt::format("<p>No profile was shown to the LLM (profiling policy: {}).</p>",
                       html::escape(v.summary.profile_policy.empty() ? "?" : v.summary.profile_policy));
  std::string o;
  bool first = true;
  for (const auto& p : v.profiles) {
    std::string of = p.kernel && v.attempt(*p.kernel) ? fmt::format(" — the best kernel then ({}, attempt {})",
                                                                    attempt_name(*v.attempt(*p.kernel)), *p.kernel)
                                                      : "";
    o += html::details(html::escape(fmt::format("first shown in step {}'s prompt{}", p.first_step, of)),
                       html::pre(p.summary, "wrap"), std::exchange(first, false), "profile");
  }
  return o;
}

std::string cost_section(const RunView& v) {
  html::Table t;
  t.id = "cost";
  t.headers = {"phase", "LLM calls", "tokens", "cost", "LLM time", "evaluations", "wall time"};
  PhaseCost total{.phase = "total"};
  for (const auto& p : v.phases) {
    if (p.llm_calls == 0 && p.evaluations == 0 && p.seconds == 0) continue;
    t.rows.push_back({html::text_cell(p.phase), html::number_cell(std::to_string(p.llm_calls), p.llm_calls),
                      html::number_cell(std::to_string(p.tokens), double(p.tokens)),
                      html::number_cell(dollars(p.cost_usd), p.cost_usd),
                      html::number_cell(seconds(p.llm_seconds), p.llm_seconds),
                      html::number_cell(std::to_string(p.evaluations), p.evaluations),
                      html::number_cell(seconds(p.seconds), p.seconds)});
    total.llm_calls += p.llm_calls;
    total.tokens += p.tokens;
    total.cost_usd += p.cost_usd;
    total.llm_seconds += p.llm_seconds;
    total.evaluations += p.evaluations;
    total.seconds += p.seconds;
  }
  t.rows.push_back({html::Cell{"<b>total</b>"}, html::number_cell(std::to_string(total.llm_calls), total.llm_calls),
                    html::number_cell(std::to_string(total.tokens), double(total.tokens)),
                    html::number_cell(dollars(total.cost_usd), total.cost_usd),
                    html::number_cell(seconds(total.llm_seconds), total.llm_seconds),
                    html::number_cell(std::to_string(total.evaluations), total.evaluations),
                    html::number_cell(seconds(total.seconds), total.seconds)});
  return t.render() +
         "<p class=\"note\">Wall time is the time between the run log's events, counted to the phase of the event "
         "that ended it (an LLM answer, an evaluation, a profile); the wait before a --resume counts in the phase "
         "that followed it.</p>";
}

}  // namespace

std::string render_run_page(const RunView& v) {
  std::string b = header(v);
  b += "<h2>Trajectory and roofline</h2><div class=\"charts\">";
  b += svg::render(trajectory_chart(v));
  std::string why_not;
  if (auto roof = roofline_chart(v, why_not)) b += svg::render(*roof);
  else b += fmt::format("<p id=\"no-roofline\" class=\"note\">No roofline chart: {}.</p>", html::escape(why_not));
  b += "</div>";
  b += "<p class=\"note\">Left: every evaluated kernel in order; failed ones (no time) on the band at the top. Right: "
       "the accepted kernels at the problem's arithmetic intensity against the ceilings <code>cutegen calibrate</code> "
       "measured; a point on the slope moves the problem's minimum bytes at full HBM bandwidth (docs/report.md).</p>";
  b += "<h2>Steps</h2>" + steps_section(v);
  b += "<h2>Profiles the LLM read</h2>" + profiles_section(v);
  b += "<h2>Cost</h2>" + cost_section(v);
  b += "<h2>Every evaluation</h2>" + html::details(fmt::format("{} evaluations", v.attempts.size()), attempts_section(v));
  if (!v.notes.empty()) {
    b += "<h2>Notes</h2><ul class=\"note\">";
    for (const auto& n : v.notes) b += "<li>" + html::escape(n) + "</li>";
    b += "</ul>";
  }
  return html::render_page({.title = "cutegen run: " + v.summary.problem_name, .body_html = b, .sortable_tables = true});
}

}  // namespace cutegen
