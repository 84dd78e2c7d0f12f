#pragma once
// The suite's tables, computed once from the task records and rendered three ways (markdown,
// CSV, JSON). The types are the interface for other renderers (an HTML report): read SuiteSummary,
// never the markdown.
//
// Definitions (docs/bench.md):
//  * correct rate: correct tasks / all tasks of the suite (unfinished ones count as not correct; a task
//    whose record is damaged is skipped: in no count, said in `skipped`);
//  * fast_p (KernelBench): the fraction of ALL tasks that are correct AND faster than the baseline
//    by more than p (speedup = baseline ms / best ms > p), for p in {0, 1, 1.5, 2}, over eager and
//    over torch.compile; a correct task without that baseline (torch.compile failed) is not counted;
//  * mean speedups: arithmetic (the figure papers quote) and geometric, over the correct tasks that
//    have the baseline only;
//  * tasks per hour: finished tasks / the span from the first start to the last finish.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/task_record.h"

namespace cutegen::bench {

inline constexpr std::array<double, 4> kFastP{0.0, 1.0, 1.5, 2.0};

struct SpeedupStats {
  std::array<double, kFastP.size()> fast_p{};  // fractions of all tasks
  std::optional<double> arithmetic_mean, geometric_mean;
  int counted = 0;        // correct tasks with this baseline (the means' population)
  int missing_baseline = 0;  // correct tasks without it
};

struct LaneStats {
  std::string lane;
  int tasks = 0;
  double busy_s = 0;   // device lock held
  double wall_s = 0;   // sum of task wall times on this lane
};

struct SuiteSummary {
  std::string mode;  // optimize | baselines
  std::string llm;
  std::vector<TaskRecord> tasks;  // every task of the suite, in name order; unfinished ones as not_started/running
  int total = 0, finished = 0, correct = 0, no_correct = 0, measured = 0, problem_errors = 0, crashed = 0,
      not_started = 0, running = 0;
  std::optional<double> correct_rate;  // optimize mode
  SpeedupStats over_eager, over_compile;
  // baselines mode: torch.compile over eager (geometric mean over problems with both), and the best
  // speedup over eager physics allows (eager / floor; geometric mean)
  std::optional<double> compile_over_eager_geomean, physics_geomean;
  double cost_usd = 0;
  long long tokens = 0;
  int llm_calls = 0;
  std::optional<double> tasks_per_hour;
  double span_s = 0;
  std::vector<LaneStats> lanes;
  std::vector<std::string> devices;  // distinct device names seen ("cpu" marks CPU-timed numbers)
  // Tasks whose results file is damaged: in no count above (total included), each said in one line.
  std::vector<DamagedRecord> skipped;

  nlohmann::json to_json() const;
};

// Whether any roofline figure (floor, eager / floor, SOL%) means something in this suite: some task has
// a floor. Tasks measured on a CPU have none (the roofline is a GPU's), and every page of the suite then
// leaves the floor's columns, cards and charts out instead of filling them with dashes.
bool has_roofline(const SuiteSummary& s);

// A task's speedup as fast_p and the means count it: nullopt unless the task is correct and has the
// baseline. The HTML page's curves and histograms use these too, so they cannot disagree with the table.
enum class Baseline { eager, compile };
std::optional<double> counted_speedup(const TaskRecord& t, Baseline b);
// KernelBench's fast_p at any p: the fraction of all `tasks` with a counted speedup > p (0 without tasks).
double fast_p(const std::vector<TaskRecord>& tasks, Baseline b, double p);
// torch.compile over eager (eager / compile) for a measured problem with both baselines.
std::optional<double> compile_over_eager(const TaskRecord& t);

// The cell formats of every rendering (markdown, HTML): "—" for a missing value.
std::string format_ms(const std::optional<double>& v);       // 4 significant digits
std::string format_speedup(const std::optional<double>& v);  // "1.23x"
std::string format_pct(const std::optional<double>& v);      // "95%"
std::string format_duration(double seconds);                 // "42s", "12m", "3.1h"

// `tasks`: one record per task of the suite (the scheduler's records, not_started for the rest);
// `skipped`: the tasks left out because their record is damaged.
SuiteSummary summarize(std::string mode, std::string llm, std::vector<TaskRecord> tasks,
                       std::vector<DamagedRecord> skipped = {});

std::string render_markdown(const SuiteSummary& s);
std::string render_csv(const SuiteSummary& s);  // one row per task

}  // namespace cutegen::bench
