#include "report/suite_page.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html.h"

namespace cutegen {
namespace {

using bench::TaskRecord;
using bench::TaskVerdict;

constexpr const char* kGreen = "#1a7f37";
constexpr const char* kAmber = "#b26a00";
constexpr const char* kRed = "#c62828";
constexpr const char* kBlue = "#1f5fbf";
constexpr const char* kGrey = "#5b6475";
constexpr const char* kPurple = "#6639ba";

// Table cells use the summary's own formats (bench::format_*), so the page reads like summary.md.
html::Cell num(std::string shown, const std::optional<double>& v) {
  if (!v) return html::text_cell(shown, "num");  // no data-sort: the sorter puts it last
  return html::number_cell(shown, *v);
}
html::Cell ms_cell(const std::optional<double>& v) { return num(bench::format_ms(v), v); }
html::Cell speedup_cell(const std::optional<double>& v) { return num(bench::format_speedup(v), v); }
html::Cell count_cell(double v) { return html::number_cell(fmt::format("{}", v), v); }
std::string fraction(double f) { return fmt::format("{:.3f}", f); }

// The verdict's colour, from the run page's classes.
std::string verdict_class(TaskVerdict v) {
  switch (v) {
    case TaskVerdict::correct:
    case TaskVerdict::measured: return "accepted";
    case TaskVerdict::no_correct_kernel:
    case TaskVerdict::problem_error:
    case TaskVerdict::crashed: return "failed";
    case TaskVerdict::not_started:
    case TaskVerdict::running: return "declined";
  }
  return "";
}

// "a, b, c and 9 more": a bar's tooltip names its tasks without growing with the suite.
std::string names(const std::vector<std::string>& tasks, size_t shown = 12) {
  std::string out;
  for (size_t i = 0; i < tasks.size() && i < shown; ++i) out += (i ? ", " : "") + tasks[i];
  if (tasks.size() > shown) out += fmt::format(" and {} more", tasks.size() - shown);
  return out;
}

std::string plural(size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string card(std::string_view key, std::string_view value, std::string_view note, std::string_view id) {
  return fmt::format("<div id=\"{}\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"n\">{}</div></div>",
                     html::escape(id), html::escape(key), html::escape(value), html::escape(note));
}

std::string figure(const std::optional<svg::Chart>& chart, std::string_view why_not) {
  if (chart) return "<figure>" + svg::render(*chart) + "</figure>";
  return fmt::format("<p class=\"note\">{}</p>", html::escape(why_not));
}

// "suites/l1/" is named l1, as "suites/l1" is.
std::string suite_name(const std::filesystem::path& dir) {
  auto name = dir.filename().empty() ? dir.parent_path().filename() : dir.filename();
  return name.string();
}

bool cpu_times(const bench::SuiteSummary& s) {
  return std::find(s.devices.begin(), s.devices.end(), "cpu") != s.devices.end();
}

std::string header(const SuiteView& v) {
  const auto& s = v.summary;
  const bool baselines = s.mode == "baselines";
  std::string devices;
  for (const auto& d : s.devices) devices += (devices.empty() ? "" : ", ") + d;
  std::string o = fmt::format("<h1>cutegen suite: {}</h1>", html::escape(suite_name(v.dir)));
  o += fmt::format("<p class=\"sub\">{} · {} · {}</p>",
                   baselines ? "baselines only (no optimize runs)" : "optimize with " + html::escape(s.llm),
                   devices.empty() ? "no device recorded" : html::escape(devices),
                   html::escape(plural(s.total, "task")));
  if (cpu_times(s))
    o += "<p class=\"warn\"><b>CPU times</b> (wall clock, for tests and smoke runs): these are not GPU results.</p>";
  o += "<div class=\"cards\" id=\"summary\">";
  o += card("tasks", fmt::format("{}", s.total),
            fmt::format("{} finished · {} running · {} not started{}", s.finished, s.running, s.not_started,
                        s.skipped.empty() ? "" : fmt::format(" · {} skipped (damaged record)", s.skipped.size())),
            "tasks");
  if (baselines) {
    o += card("measured", fmt::format("{}", s.measured),
              fmt::format("{} problem errors · {} crashed", s.problem_errors, s.crashed), "measured");
    o += card("torch.compile over eager", bench::format_speedup(s.compile_over_eager_geomean), "geometric mean",
              "compile-over-eager");
    if (bench::has_roofline(s))
      o += card("best speedup possible", bench::format_speedup(s.physics_geomean), "eager / floor, geometric mean",
                "physics");
  } else {
    o += card("correct", fmt::format("{}/{}", s.correct, s.total),
              s.correct_rate ? fmt::format("{:.1f}% · {} crashed", 100 * *s.correct_rate, s.crashed) : "", "correct");
    o += card("fast_1 over eager", fraction(s.over_eager.fast_p[1]),
              "geomean " + bench::format_speedup(s.over_eager.geometric_mean), "fast1-eager");
    o += card("fast_1 over torch.compile", fraction(s.over_compile.fast_p[1]),
              "geomean " + bench::format_speedup(s.over_compile.geometric_mean), "fast1-compile");
    o += card("LLM cost", fmt::format("${:.2f}", s.cost_usd),
              fmt::format("{} calls · {} tokens", s.llm_calls, s.tokens), "cost");
  }
  o += card("tasks per hour", s.tasks_per_hour ? fmt::format("{:.1f}", *s.tasks_per_hour) : "—",
            s.span_s > 0 ? "over " + bench::format_duration(s.span_s) : "", "throughput");
  o += "</div>";
  return o;
}

// The summary's fast_p table, as summary.md has it.
std::string fast_p_table(const bench::SuiteSummary& s) {
  html::Table t;
  t.id = "fast-p";
  t.headers = {"", "over eager", "over torch.compile"};
  for (size_t i = 0; i < bench::kFastP.size(); ++i)
    t.rows.push_back({html::text_cell(fmt::format("fast_{:g}", bench::kFastP[i])),
                      html::number_cell(fraction(s.over_eager.fast_p[i]), s.over_eager.fast_p[i]),
                      html::number_cell(fraction(s.over_compile.fast_p[i]), s.over_compile.fast_p[i])});
  t.rows.push_back({html::text_cell("mean speedup, arithmetic"), speedup_cell(s.over_eager.arithmetic_mean),
                    speedup_cell(s.over_compile.arithmetic_mean)});
  t.rows.push_back({html::text_cell("mean speedup, geometric"), speedup_cell(s.over_eager.geometric_mean),
                    speedup_cell(s.over_compile.geometric_mean)});
  t.rows.push_back({html::text_cell("tasks in the means"), count_cell(s.over_eager.counted),
                    count_cell(s.over_compile.counted)});
  std::string o = t.render();
  o += "<p class=\"note\">fast_p (KernelBench): the fraction of <i>all</i> tasks that are correct and faster than "
       "the baseline by more than p. Means are over the correct tasks with that baseline";
  if (s.over_compile.missing_baseline > 0)
    o += fmt::format("; {} without a torch.compile time (it failed on the model) count as not fast over it",
                     plural(s.over_compile.missing_baseline, "correct task"));
  return o + ".</p>";
}

html::Cell task_cell(const TaskRecord& t, const RunPageLink& l, bool optimize) {
  html::Cell c;
  // KernelBench's number first, so sorting by this column reads 1, 2, ..., 10 rather than 1, 10, 100, 11.
  c.sort_key = t.number ? fmt::format("{} {}", *t.number, t.name) : t.name;
  if (!optimize && !l.exists)
    c.html = html::escape(t.name);  // baselines have no run pages: nothing to say per task
  else if (l.exists)
    c.html = fmt::format("<a href=\"{}\">{}</a>", html::escape(l.href), html::escape(t.name));
  else
    c.html = fmt::format("{} <span class=\"note missing-run-page\" title=\"{}\">(no run page)</span>",
                         html::escape(t.name), html::escape(l.missing));
  return c;
}

std::string optimize_table(const SuiteView& v) {
  html::Table t;
  t.id = "tasks";
  t.sortable = true;
  t.css_class = "compact";
  t.headers = {"task", "verdict", "best ms", "eager ms", "compile ms", "x eager", "x compile", "SOL", "steps",
               "LLM calls", "tokens", "$", "wall", "seed", "seed ms", "example"};
  for (size_t i = 0; i < v.summary.tasks.size(); ++i) {
    const TaskRecord& r = v.summary.tasks[i];
    const bool over = bench::is_final(r.verdict);
    t.rows.push_back({task_cell(r, v.links[i], true),
                      html::text_cell(bench::to_string(r.verdict), verdict_class(r.verdict)),
                      ms_cell(r.best_ms), ms_cell(r.eager_ms), ms_cell(r.compile_ms), speedup_cell(r.speedup_eager()),
                      speedup_cell(r.speedup_compile()), num(bench::format_pct(r.sol_pct), r.sol_pct),
                      count_cell(r.steps), count_cell(r.llm_calls), count_cell(static_cast<double>(r.tokens)),
                      html::number_cell(fmt::format("{:.2f}", r.cost_usd), r.cost_usd),
                      over ? html::number_cell(bench::format_duration(r.wall_s), r.wall_s) : html::text_cell("—"),
                      // The seed pattern the run started from (docs/seed.md) and what the seed alone reached.
                      html::text_cell(r.seed.empty() ? "—" : r.seed), ms_cell(r.seed_ms),
                      html::text_cell(r.example.empty() ? "—" : r.example)});
  }
  return "<div class=\"scroll\">" + t.render() + "</div>";
}

std::string baselines_table(const SuiteView& v) {
  html::Table t;
  t.id = "tasks";
  t.sortable = true;
  t.css_class = "compact";
  // The floor's columns only when some task has a floor (none on a CPU), as in summary.md.
  const bool floors = bench::has_roofline(v.summary);
  t.headers = {"task", "verdict", "eager ms", "compile ms", "compile/eager"};
  if (floors) t.headers.insert(t.headers.end(), {"floor ms", "bound", "eager/floor"});
  t.headers.insert(t.headers.end(), {"GFLOP", "MB"});
  for (size_t i = 0; i < v.summary.tasks.size(); ++i) {
    const TaskRecord& r = v.summary.tasks[i];
    std::optional<double> gflop, mb;
    if (r.flops) gflop = r.flops / 1e9;
    if (r.min_bytes) mb = r.min_bytes / 1e6;
    std::vector<html::Cell> row = {task_cell(r, v.links[i], false),
                                   html::text_cell(bench::to_string(r.verdict), verdict_class(r.verdict)),
                                   ms_cell(r.eager_ms),
                                   r.compile_error.empty() ? ms_cell(r.compile_ms) : html::text_cell("error", "failed"),
                                   speedup_cell(bench::compile_over_eager(r))};
    if (floors)
      row.insert(row.end(), {ms_cell(r.floor_ms), html::text_cell(r.floor_bound.empty() ? "—" : r.floor_bound),
                             speedup_cell(r.physics_speedup())});
    row.insert(row.end(), {num(gflop ? fmt::format("{:.3g}", *gflop) : "—", gflop), num(mb ? fmt::format("{:.3g}", *mb) : "—", mb)});
    t.rows.push_back(std::move(row));
  }
  return "<div class=\"scroll\">" + t.render() + "</div>";
}

// What went wrong per task, as summary.md lists it.
std::string notes(const bench::SuiteSummary& s) {
  std::string items;
  for (const auto& d : s.skipped)
    items += fmt::format("<li><b>{}</b> (skipped): its record {} is damaged: {}</li>", html::escape(d.task),
                         html::escape(d.path), html::escape(d.why));
  for (const auto& t : s.tasks)
    if (!t.detail.empty() && t.verdict != TaskVerdict::correct && t.verdict != TaskVerdict::measured)
      items += fmt::format("<li><b>{}</b> ({}): {}</li>", html::escape(t.name), bench::to_string(t.verdict),
                           html::escape(t.detail));
    else if (!t.compile_error.empty())
      items += fmt::format("<li><b>{}</b>: torch.compile failed: {}</li>", html::escape(t.name),
                           html::escape(t.compile_error));
  return items.empty() ? "" : "<h2>Notes</h2><ul id=\"notes\" class=\"notes\">" + items + "</ul>";
}

std::string lanes_table(const bench::SuiteSummary& s) {
  if (s.lanes.empty()) return "";
  html::Table t;
  t.id = "lanes";
  t.headers = {"lane", "tasks", "device busy", "task wall"};
  for (const auto& l : s.lanes)
    t.rows.push_back({html::text_cell(l.lane), count_cell(l.tasks),
                      html::number_cell(bench::format_duration(l.busy_s), l.busy_s),
                      html::number_cell(bench::format_duration(l.wall_s), l.wall_s)});
  return "<h2>Lanes</h2>" + t.render();
}

std::string run_page_note(const SuiteView& v) {
  if (v.summary.mode == "baselines") return "";
  size_t missing = std::count_if(v.links.begin(), v.links.end(), [](const auto& l) { return !l.exists; });
  if (missing == 0) return "<p class=\"note\">Each task's name links to its run page.</p>";
  return fmt::format("<p class=\"note\">Each task's name links to its run page; {} {} none (hover over \"no run "
                     "page\" for why): a task that never started has no run directory, and <code>cutegen report "
                     "{}/tasks/NAME</code> writes the page of one that has.</p>",
                     plural(missing, "task"), missing == 1 ? "has" : "have", html::escape(v.dir.string()));
}

}  // namespace

svg::Chart fast_p_chart(const SuiteView& v) {
  const auto& s = v.summary;
  svg::Chart c;
  c.id = "fast-p-curve";
  c.title = "fast_p: correct and faster than the baseline by more than p";
  double max_p = 2.2;
  for (const auto* curve : {&v.fast_p_eager, &v.fast_p_compile})
    if (!curve->empty()) max_p = std::max(max_p, curve->back().p * 1.08);
  c.x = {.label = "p (speedup threshold: baseline ms / best ms)", .min = 0, .max = max_p, .unit = "x"};
  c.y = {.label = "fraction of all tasks", .min = 0, .max = 1.05};
  auto curve = [&](const std::vector<CurvePoint>& pts, std::string name, std::string cls, const char* color) {
    svg::Series line{.name = std::move(name), .css_class = std::move(cls), .color = color, .step_line = true,
                     .points = false};
    for (const auto& p : pts) line.data.push_back({.x = p.p, .y = p.fraction});
    if (!line.data.empty()) line.data.push_back({.x = max_p, .y = line.data.back().y});
    return line;
  };
  auto marks = [&](const bench::SpeedupStats& st, std::string cls, const char* color, std::string baseline) {
    svg::Series m{.css_class = std::move(cls), .color = color};
    for (size_t i = 0; i < bench::kFastP.size(); ++i)
      m.data.push_back({.x = bench::kFastP[i], .y = st.fast_p[i],
                        .tooltip = fmt::format("fast_{:g} over {} = {} ({} of {} tasks)", bench::kFastP[i], baseline,
                                               fraction(st.fast_p[i]),
                                               static_cast<int>(std::lround(st.fast_p[i] * s.total)), s.total)});
    return m;
  };
  c.series = {curve(v.fast_p_eager, "over eager", "curve-eager", kGrey),
              curve(v.fast_p_compile, "over torch.compile", "curve-compile", kBlue),
              marks(s.over_eager, "fastp-eager", kGrey, "eager"),
              marks(s.over_compile, "fastp-compile", kBlue, "torch.compile")};
  c.vlines.push_back({.x = 1, .label = "as fast as the baseline", .css_class = "parity", .color = "#8a93a5"});
  return c;
}

std::optional<svg::Chart> speedup_histogram(const std::vector<Bin>& bins, std::string id, std::string title,
                                            std::string x_label, std::string below, std::string above) {
  if (bins.empty()) return std::nullopt;
  svg::Chart c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x = {.label = std::move(x_label), .scale = svg::Scale::log, .min = std::min(bins.front().lo, 0.5),
         .max = std::max(bins.back().hi, 2.0), .unit = "x"};
  c.y = {.label = "tasks", .min = 0, .integer = true};
  svg::BarSeries slower{.name = std::move(below), .css_class = "slower", .color = kAmber};
  svg::BarSeries faster{.name = std::move(above), .css_class = "faster", .color = kGreen};
  size_t most = 1;
  for (const auto& b : bins) {
    most = std::max(most, b.tasks.size());
    if (b.tasks.empty()) continue;
    svg::Bar bar{.x0 = b.lo, .x1 = b.hi, .y = static_cast<double>(b.tasks.size()),
                 .tooltip = fmt::format("{:.2f}x to {:.2f}x: {}: {}", b.lo, b.hi, plural(b.tasks.size(), "task"),
                                        names(b.tasks))};
    (b.hi <= 1 ? slower : faster).bars.push_back(std::move(bar));
  }
  c.y.max = std::max(4.0, most * 1.1);
  c.bars = {slower, faster};
  c.vlines.push_back({.x = 1, .label = "1x", .css_class = "parity", .color = "#8a93a5"});
  return c;
}

std::optional<svg::Chart> sol_histogram(const SuiteView& v) {
  size_t most = 0;
  for (const auto& b : v.sol) most = std::max(most, b.tasks.size());
  if (most == 0) return std::nullopt;
  svg::Chart c;
  c.id = "sol";
  c.title = "SOL% of the correct tasks (roofline floor / best time)";
  const bool over = v.sol.size() > 10;
  c.x = {.label = over ? "SOL% (the last bin: 100% and more, where the floor model is wrong)" : "SOL%", .min = 0,
         .max = over ? 110.0 : 100.0, .unit = "%"};
  c.y = {.label = "tasks", .min = 0, .max = std::max(4.0, most * 1.1), .integer = true};
  svg::BarSeries bars{.css_class = "sol", .color = kPurple};
  for (const auto& b : v.sol) {
    if (b.tasks.empty()) continue;
    bool last = std::isinf(b.hi);
    bars.bars.push_back({.x0 = b.lo, .x1 = last ? 110 : b.hi, .y = static_cast<double>(b.tasks.size()),
                         .tooltip = fmt::format("{}: {}: {}",
                                                last ? std::string("100% and more") : fmt::format("{:g}-{:g}%", b.lo, b.hi),
                                                plural(b.tasks.size(), "task"), names(b.tasks))});
  }
  c.bars = {bars};
  return c;
}

std::optional<svg::Chart> cost_chart(const SuiteView& v) {
  std::vector<const TaskRecord*> costly;
  for (const auto& t : v.summary.tasks)
    if (t.cost_usd > 0) costly.push_back(&t);
  if (costly.empty()) return std::nullopt;
  std::stable_sort(costly.begin(), costly.end(), [](auto* a, auto* b) { return a->cost_usd > b->cost_usd; });
  svg::Chart c;
  c.id = "cost";
  c.title = "$ per task, most expensive first";
  c.x = {.label = fmt::format("tasks that cost anything ({} of {})", costly.size(), v.summary.total), .min = 0.5,
         .max = costly.size() + 0.5, .integer = true};
  c.y = {.label = "$", .min = 0, .max = costly.front()->cost_usd * 1.1};
  svg::BarSeries correct{.name = "correct", .css_class = "correct", .color = kGreen};
  svg::BarSeries other{.name = "not correct", .css_class = "not-correct", .color = kRed};
  for (size_t i = 0; i < costly.size(); ++i) {
    const TaskRecord& t = *costly[i];
    (t.verdict == TaskVerdict::correct ? correct : other)
        .bars.push_back({.x0 = i + 0.5, .x1 = i + 1.5, .y = t.cost_usd,
                         .tooltip = fmt::format("{}: ${:.4f}, {} tokens, {} calls ({})", t.name, t.cost_usd, t.tokens,
                                                t.llm_calls, bench::to_string(t.verdict))});
  }
  c.bars = {correct, other};
  return c;
}

std::string render_suite_page(const SuiteView& v) {
  const auto& s = v.summary;
  std::string body = header(v);
  if (s.mode == "baselines") {
    const bool roofline = bench::has_roofline(s);
    if (roofline)
      body += "<p>The problems as PyTorch runs them, before any kernel: eager and <code>torch.compile</code> times, the "
              "roofline floor (the time at the calibrated bandwidth and matmul rate) and <b>eager / floor</b>, the "
              "largest speedup over eager the hardware allows.</p>";
    else
      body += "<p>The problems as PyTorch runs them, before any kernel: eager and <code>torch.compile</code> times. No "
              "roofline figures: no task has a floor (a CPU gets none; the roofline is a GPU's).</p>";
    body += "<h2>Distributions</h2><div class=\"charts\">";
    if (roofline)
      body += figure(speedup_histogram(v.physics, "physics", "Best speedup over eager the roofline allows (eager / floor)",
                                       "eager / floor, log bins of a factor sqrt(2)",
                                       "eager beats the floor (check it)", "room to win"),
                     "No problem has both an eager time and a roofline floor.");
    body += figure(speedup_histogram(v.compile_over_eager, "compile-over-eager", "torch.compile over eager",
                                     "eager ms / torch.compile ms, log bins of a factor sqrt(2)",
                                     "torch.compile slower", "torch.compile faster"),
                   "No problem has both an eager and a torch.compile time.");
    body += "</div><h2>Problems</h2>" + baselines_table(v);
  } else {
    body += "<h2>fast_p</h2><div class=\"charts\"><figure>" + svg::render(fast_p_chart(v)) + "</figure><div>" +
            fast_p_table(s) + "</div></div>";
    body += "<h2>Distributions</h2><div class=\"charts\">";
    body += figure(speedup_histogram(v.speedup_eager, "speedup-eager", "Speedup over eager",
                                     "eager ms / best ms, log bins of a factor sqrt(2)"),
                   "No correct task has an eager time yet.");
    body += figure(speedup_histogram(v.speedup_compile, "speedup-compile", "Speedup over torch.compile",
                                     "torch.compile ms / best ms, log bins of a factor sqrt(2)"),
                   "No correct task has a torch.compile time yet.");
    body += figure(sol_histogram(v), cpu_times(s) ? "No SOL%: CPU times have no roofline floor."
                                                  : "No correct task has a SOL% (no roofline floor: run `cutegen calibrate`).");
    body += figure(cost_chart(v), "No task cost anything (replayed or no-LLM runs cost $0).");
    body += "</div><h2>Tasks</h2>" + run_page_note(v) + optimize_table(v);
  }
  body += "<p class=\"note\">Click a column's header to sort by it. The numbers are those of summary.md, summary.csv "
          "and summary.json (<code>cutegen bench report</code>), computed once from <code>results/*.json</code>.</p>";
  body += notes(s) + lanes_table(s);
  return html::render_page({.title = "cutegen suite: " + suite_name(v.dir), .body_html = body,
                            .sortable_tables = true});
}

}  // namespace cutegen
