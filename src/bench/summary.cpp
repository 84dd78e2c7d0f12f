#include "bench/summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/json_text.h"
#include "common/terminal_text.h"

namespace cutegen::bench {
namespace {

std::optional<double> geomean(const std::vector<double>& xs) {
  if (xs.empty()) return std::nullopt;
  double log_sum = 0;
  for (double x : xs) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(xs.size()));
}

SpeedupStats speedups(const std::vector<TaskRecord>& tasks, Baseline b) {
  SpeedupStats s;
  std::vector<double> xs;
  for (const auto& t : tasks) {
    if (t.verdict != TaskVerdict::correct) continue;
    if (auto x = counted_speedup(t, b)) xs.push_back(*x);
    else ++s.missing_baseline;
  }
  for (size_t i = 0; i < kFastP.size(); ++i) s.fast_p[i] = fast_p(tasks, b, kFastP[i]);
  s.counted = static_cast<int>(xs.size());
  if (!xs.empty()) {
    double sum = 0;
    for (double x : xs) sum += x;
    s.arithmetic_mean = sum / static_cast<double>(xs.size());
    s.geometric_mean = geomean(xs);
  }
  return s;
}

nlohmann::json to_json(const SpeedupStats& s) {
  nlohmann::json fast = nlohmann::json::object();
  for (size_t i = 0; i < kFastP.size(); ++i) fast[fmt::format("fast_{:g}", kFastP[i])] = s.fast_p[i];
  return {{"fast_p", fast},
          {"arithmetic_mean", value_or_null(s.arithmetic_mean)},
          {"geometric_mean", value_or_null(s.geometric_mean)},
          {"counted", s.counted}, {"missing_baseline", s.missing_baseline}};
}

std::string ms(const std::optional<double>& v) { return format_ms(v); }
std::string times(const std::optional<double>& v) { return format_speedup(v); }
std::string pct(const std::optional<double>& v) { return format_pct(v); }
std::string duration(double s) { return format_duration(s); }
// Table cells hold one line without pipes, and show control characters instead of obeying them (task
// names are file names; details quote the worker and the LLM).
std::string cell(std::string s, size_t max = 80) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '|', '/');
  s = terminal_safe(s);
  if (s.size() > max) s = clip_utf8(s, max);
  return s;
}

std::string csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
std::string csv(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }

}  // namespace

bool has_roofline(const SuiteSummary& s) {
  return std::any_of(s.tasks.begin(), s.tasks.end(), [](const TaskRecord& t) { return t.floor_ms.has_value(); });
}

std::optional<double> counted_speedup(const TaskRecord& t, Baseline b) {
  if (t.verdict != TaskVerdict::correct) return std::nullopt;
  return b == Baseline::eager ? t.speedup_eager() : t.speedup_compile();
}

double fast_p(const std::vector<TaskRecord>& tasks, Baseline b, double p) {
  if (tasks.empty()) return 0;
  int fast = 0;
  for (const auto& t : tasks)
    if (auto x = counted_speedup(t, b); x && *x > p) ++fast;
  return static_cast<double>(fast) / static_cast<double>(tasks.size());
}

std::optional<double> compile_over_eager(const TaskRecord& t) {
  if (!t.eager_ms || !t.compile_ms || *t.compile_ms <= 0) return std::nullopt;
  return *t.eager_ms / *t.compile_ms;
}

std::string format_ms(const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : "—"; }
std::string format_speedup(const std::optional<double>& v) { return v ? fmt::format("{:.2f}x", *v) : "—"; }
std::string format_pct(const std::optional<double>& v) { return v ? fmt::format("{:.0f}%", *v) : "—"; }
std::string format_duration(double s) {
  if (s < 90) return fmt::format("{:.0f}s", s);
  if (s < 5400) return fmt::format("{:.0f}m", s / 60);
  return fmt::format("{:.1f}h", s / 3600);
}

SuiteSummary summarize(std::string mode, std::string llm, std::vector<TaskRecord> tasks,
                       std::vector<DamagedRecord> skipped) {
  SuiteSummary s;
  s.skipped = std::move(skipped);
  s.mode = std::move(mode);
  s.llm = std::move(llm);
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  s.tasks = std::move(tasks);
  s.total = static_cast<int>(s.tasks.size());
  double first_start = 0, last_finish = 0;
  std::map<std::string, LaneStats> lanes;
  std::set<std::string> devices;
  std::vector<double> compile_ratios, physics;
  for (const auto& t : s.tasks) {
    switch (t.verdict) {
      case TaskVerdict::correct: ++s.correct; break;
      case TaskVerdict::no_correct_kernel: ++s.no_correct; break;
      case TaskVerdict::measured: ++s.measured; break;
      case TaskVerdict::problem_error: ++s.problem_errors; break;
      case TaskVerdict::crashed: ++s.crashed; break;
      case TaskVerdict::not_started: ++s.not_started; break;
      case TaskVerdict::running: ++s.running; break;
    }
    s.cost_usd += t.cost_usd;
    s.tokens += t.tokens;
    s.llm_calls += t.llm_calls;
    if (!t.device.empty()) devices.insert(t.device);
    if (is_final(t.verdict)) {
      ++s.finished;
      if (t.started_at > 0 && (first_start == 0 || t.started_at < first_start)) first_start = t.started_at;
      last_finish = std::max(last_finish, t.finished_at);
      if (!t.lane.empty()) {
        auto& l = lanes[t.lane];
        l.lane = t.lane;
        ++l.tasks;
        l.busy_s += t.gpu_busy_s;
        l.wall_s += t.wall_s;
      }
    }
    if (t.verdict == TaskVerdict::measured) {
      if (auto x = compile_over_eager(t)) compile_ratios.push_back(*x);
      if (auto x = t.physics_speedup()) physics.push_back(*x);
    }
  }
  if (s.mode == "optimize" && s.total > 0) s.correct_rate = static_cast<double>(s.correct) / s.total;
  s.over_eager = speedups(s.tasks, Baseline::eager);
  s.over_compile = speedups(s.tasks, Baseline::compile);
  s.compile_over_eager_geomean = geomean(compile_ratios);
  s.physics_geomean = geomean(physics);
  // The time some task was running: the union of the finished tasks' intervals. A suite resumed a day
  // later (or over two GPU leases) is not charged for the hours nothing ran; one continuous run's span
  // is its first start to its last finish, as before.
  std::vector<std::pair<double, double>> spans;
  for (const auto& t : s.tasks)
    if (is_final(t.verdict) && t.started_at > 0 && t.finished_at > t.started_at) spans.emplace_back(t.started_at, t.finished_at);
  std::sort(spans.begin(), spans.end());
  double active = 0, open_from = 0, open_to = 0;
  for (const auto& [from, to] : spans) {
    if (from > open_to) {
      active += open_to - open_from;
      open_from = from;
      open_to = to;
    } else {
      open_to = std::max(open_to, to);
    }
  }
  active += open_to - open_from;
  if (s.finished > 0 && active > 0 && first_start > 0 && last_finish > first_start) {
    s.span_s = active;
    s.tasks_per_hour = s.finished / (s.span_s / 3600.0);
  }
  for (auto& [_, l] : lanes) s.lanes.push_back(l);
  s.devices.assign(devices.begin(), devices.end());
  return s;
}

nlohmann::json SuiteSummary::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& t : tasks) rows.push_back(t.to_json());
  nlohmann::json skipped_rows = nlohmann::json::array();
  for (const auto& d : skipped) skipped_rows.push_back({{"task", d.task}, {"path", d.path}, {"why", d.why}});
  nlohmann::json lane_rows = nlohmann::json::array();
  for (const auto& l : lanes)
    lane_rows.push_back({{"lane", l.lane}, {"tasks", l.tasks}, {"busy_s", l.busy_s}, {"wall_s", l.wall_s}});
  return {{"format", "cutegen-bench-summary/1"},
          {"mode", mode}, {"llm", llm},
          {"counts", {{"total", total}, {"finished", finished}, {"correct", correct}, {"no_correct_kernel", no_correct},
                      {"measured", measured}, {"problem_error", problem_errors}, {"crashed", crashed},
                      {"not_started", not_started}, {"running", running},
                      {"skipped_damaged", static_cast<int>(skipped.size())}}},
          {"correct_rate", value_or_null(correct_rate)},
          {"over_eager", bench::to_json(over_eager)}, {"over_compile", bench::to_json(over_compile)},
          {"compile_over_eager_geomean", value_or_null(compile_over_eager_geomean)},
          {"physics_geomean", value_or_null(physics_geomean)},
          {"cost_usd", cost_usd}, {"tokens", tokens}, {"llm_calls", llm_calls},
          {"tasks_per_hour", value_or_null(tasks_per_hour)}, {"span_s", span_s},
          {"lanes", lane_rows}, {"devices", devices}, {"tasks", rows}, {"skipped", skipped_rows}};
}

std::string render_markdown(const SuiteSummary& s) {
  std::string out = fmt::format("# cutegen bench: {} tasks ({})\n\n", s.total,
                                s.mode == "baselines" ? "baselines only" : "optimize with " + s.llm);
  out += fmt::format("{} of {} finished", s.finished, s.total);
  if (s.mode == "optimize")
    out += fmt::format(": {} correct, {} without a correct kernel", s.correct, s.no_correct);
  else
    out += fmt::format(": {} measured", s.measured);
  out += fmt::format(", {} problem errors, {} crashed; {} running, {} not started.\n", s.problem_errors, s.crashed,
                     s.running, s.not_started);
  if (!s.skipped.empty()) {
    out += fmt::format("**{} task{} skipped**: {} record is damaged (in no count here; delete or repair "
                       "the file, and the next run of the suite runs the task again):\n",
                       s.skipped.size(), s.skipped.size() == 1 ? "" : "s", s.skipped.size() == 1 ? "its" : "their");
    for (const auto& d : s.skipped) out += fmt::format("- {}\n", d.line());
  }
  std::vector<std::string> facts;
  std::string devices;
  for (const auto& d : s.devices) devices += (devices.empty() ? "" : ", ") + d;
  if (!devices.empty()) facts.push_back(fmt::format("Device: {}.", devices));
  if (std::find(s.devices.begin(), s.devices.end(), "cpu") != s.devices.end())
    facts.push_back("**CPU times** (wall clock, for tests and smoke runs): not GPU results.");
  if (s.tasks_per_hour) facts.push_back(fmt::format("{:.1f} tasks/hour over {}.", *s.tasks_per_hour, duration(s.span_s)));
  if (s.mode == "optimize") facts.push_back(fmt::format("LLM: {} calls, {} tokens, ${:.2f}.", s.llm_calls, s.tokens, s.cost_usd));
  for (size_t i = 0; i < facts.size(); ++i) out += (i ? " " : "") + facts[i];
  out += "\n\n";

  if (s.mode == "optimize") {
    out += fmt::format("Correct: {}/{} ({}).\n\n", s.correct, s.total, s.correct_rate ? fmt::format("{:.1f}%", 100 * *s.correct_rate) : "—");
    out += "| | over eager | over torch.compile |\n| --- | --- | --- |\n";
    for (size_t i = 0; i < kFastP.size(); ++i)
      out += fmt::format("| fast_{:g} | {:.3f} | {:.3f} |\n", kFastP[i], s.over_eager.fast_p[i], s.over_compile.fast_p[i]);
    out += fmt::format("| mean speedup, arithmetic | {} | {} |\n", times(s.over_eager.arithmetic_mean),
                       times(s.over_compile.arithmetic_mean));
    out += fmt::format("| mean speedup, geometric | {} | {} |\n", times(s.over_eager.geometric_mean),
                       times(s.over_compile.geometric_mean));
    out += fmt::format("| tasks in the means | {} | {} |\n\n", s.over_eager.counted, s.over_compile.counted);
    out += "fast_p: the fraction of all tasks that are correct and faster than the baseline by more than p. "
           "Means are over the correct tasks with that baseline.\n\n";
  } else {
    out += fmt::format("torch.compile over eager (geometric mean): {}.", times(s.compile_over_eager_geomean));
    if (has_roofline(s))
      out += fmt::format(" Best speedup over eager the roofline allows (eager / floor, geometric mean): {}.",
                         times(s.physics_geomean));
    else
      out += " No roofline figures: no task has a floor (a CPU gets none; the roofline is a GPU's).";
    out += "\n\n";
  }

  if (!s.lanes.empty()) {
    out += "| lane | tasks | device busy | task wall |\n| --- | --- | --- | --- |\n";
    for (const auto& l : s.lanes)
      out += fmt::format("| {} | {} | {} | {} |\n", l.lane, l.tasks, duration(l.busy_s), duration(l.wall_s));
    out += "\n";
  }

  if (s.mode == "optimize") {
    // seed: the pattern judged first and, when it passed, its own time (against `best ms`, what the LLM made of it).
    out += "| task | verdict | best ms | eager ms | compile ms | x eager | x compile | SOL | steps | calls | tokens | $ | "
           "wall | seed | seed ms | example |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
           "| --- | --- | --- |\n";
    for (const auto& t : s.tasks)
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {} | {} | {} | {} |\n",
                         cell(t.name), to_string(t.verdict), ms(t.best_ms), ms(t.eager_ms), ms(t.compile_ms),
                         times(t.speedup_eager()), times(t.speedup_compile()), pct(t.sol_pct), t.steps, t.llm_calls,
                         t.tokens, t.cost_usd, is_final(t.verdict) ? duration(t.wall_s) : "—",
                         t.seed.empty() ? "—" : cell(t.seed, 40), ms(t.seed_ms), t.example.empty() ? "—" : cell(t.example, 40));
  } else {
    // The floor's columns only when some task has a floor (none on a CPU).
    const bool floors = has_roofline(s);
    out += floors ? "| task | verdict | eager ms | compile ms | compile/eager | floor ms | bound | eager/floor | GFLOP | MB |\n"
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
                  : "| task | verdict | eager ms | compile ms | compile/eager | GFLOP | MB |\n"
                    "| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& t : s.tasks) {
      std::optional<double> ce = compile_over_eager(t);
      const std::string floor_cells =
          floors ? fmt::format(" {} | {} | {} |", ms(t.floor_ms), t.floor_bound.empty() ? "—" : t.floor_bound,
                               times(t.physics_speedup()))
                 : "";
      out += fmt::format("| {} | {} | {} | {} | {} |{} {} | {} |\n", cell(t.name), to_string(t.verdict),
                         ms(t.eager_ms), t.compile_error.empty() ? ms(t.compile_ms) : "error", times(ce), floor_cells,
                         t.flops ? fmt::format("{:.3g}", t.flops / 1e9) : "—",
                         t.min_bytes ? fmt::format("{:.3g}", t.min_bytes / 1e6) : "—");
    }
  }
  std::string notes;
  for (const auto& t : s.tasks)
    if (!t.detail.empty() && t.verdict != TaskVerdict::correct && t.verdict != TaskVerdict::measured)
      notes += fmt::format("- {} ({}): {}\n", cell(t.name, 300), to_string(t.verdict), cell(t.detail, 300));
    else if (!t.compile_error.empty())
      notes += fmt::format("- {}: torch.compile failed: {}\n", cell(t.name, 300), cell(t.compile_error, 300));
  if (!notes.empty()) out += "\n" + notes;
  // What the cells above do not hold (the LLM spec, device names, lanes) comes from records too.
  return terminal_safe(out, LineBreaks::keep);
}

std::string render_csv(const SuiteSummary& s) {
  std::string out =
      "task,number,verdict,detail,stop_reason,device,best_ms,eager_ms,compile_ms,speedup_eager,speedup_compile,sol_pct,"
      "floor_ms,floor_bound,physics_speedup,flops,min_bytes,steps,syntheses,llm_calls,tokens,cost_usd,wall_s,gpu_busy_s,"
      "lane,host,shard,example,compile_error,seed,seed_ms\n";
  for (const auto& t : s.tasks)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.3f},{:.3f},{},{},{},{},{},{},{}\n",
                       csv(t.name), t.number ? std::to_string(*t.number) : "", to_string(t.verdict), csv(t.detail),
                       csv(t.stop_reason), csv(t.device), csv(t.best_ms), csv(t.eager_ms), csv(t.compile_ms),
                       csv(t.speedup_eager()), csv(t.speedup_compile()), csv(t.sol_pct), csv(t.floor_ms), t.floor_bound,
                       csv(t.physics_speedup()), t.flops, t.min_bytes, t.steps, t.syntheses, t.llm_calls, t.tokens,
                       t.cost_usd, t.wall_s, t.gpu_busy_s, csv(t.lane), csv(t.host), csv(t.shard), csv(t.example),
                       csv(t.compile_error), csv(t.seed), csv(t.seed_ms));
  return out;
}

}  // namespace cutegen::bench
