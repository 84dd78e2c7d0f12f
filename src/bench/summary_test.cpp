#include "bench/summary.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen::bench;

namespace {
TaskRecord task(const std::string& name, TaskVerdict v, std::optional<double> best, std::optional<double> eager,
                std::optional<double> compile) {
  TaskRecord r;
  r.name = name;
  r.verdict = v;
  r.best_ms = best;
  r.eager_ms = eager;
  r.compile_ms = compile;
  return r;
}
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

// Six tasks, by hand: speedups over eager 4, 2, 1.2, 0.5 (correct), plus a failure and a task not run.
// Over compile: 2, 1 (not > 1), no baseline, 0.25.
TEST(Summary, FastPAndMeansFollowKernelBenchsDefinition) {
  std::vector<TaskRecord> tasks{
      task("a", TaskVerdict::correct, 1.0, 4.0, 2.0),
      task("b", TaskVerdict::correct, 1.0, 2.0, 1.0),
      task("c", TaskVerdict::correct, 1.0, 1.2, std::nullopt),
      task("d", TaskVerdict::correct, 2.0, 1.0, 0.5),
      task("e", TaskVerdict::no_correct_kernel, std::nullopt, 1.0, 1.0),
      task("f", TaskVerdict::not_started, std::nullopt, std::nullopt, std::nullopt),
  };
  tasks[0].cost_usd = 1.5;
  tasks[4].cost_usd = 0.5;
  auto s = summarize("optimize", "replay:x", tasks);
  EXPECT_EQ(s.total, 6);
  EXPECT_EQ(s.correct, 4);
  EXPECT_EQ(s.finished, 5);
  EXPECT_EQ(s.not_started, 1);
  ASSERT_TRUE(s.correct_rate);
  EXPECT_DOUBLE_EQ(*s.correct_rate, 4.0 / 6);
  // Over eager: > 0: 4 tasks; > 1: 3 (4, 2, 1.2); > 1.5: 2; > 2: 1 (2 is not > 2). Denominator: all six.
  EXPECT_DOUBLE_EQ(s.over_eager.fast_p[0], 4.0 / 6);
  EXPECT_DOUBLE_EQ(s.over_eager.fast_p[1], 3.0 / 6);
  EXPECT_DOUBLE_EQ(s.over_eager.fast_p[2], 2.0 / 6);
  EXPECT_DOUBLE_EQ(s.over_eager.fast_p[3], 1.0 / 6);
  EXPECT_DOUBLE_EQ(*s.over_eager.arithmetic_mean, (4 + 2 + 1.2 + 0.5) / 4);
  EXPECT_NEAR(*s.over_eager.geometric_mean, std::pow(4 * 2 * 1.2 * 0.5, 0.25), 1e-12);
  EXPECT_EQ(s.over_eager.counted, 4);
  // Over compile: c has no compile baseline: not counted anywhere, and said so.
  EXPECT_DOUBLE_EQ(s.over_compile.fast_p[0], 3.0 / 6);
  EXPECT_DOUBLE_EQ(s.over_compile.fast_p[1], 1.0 / 6);
  EXPECT_EQ(s.over_compile.counted, 3);
  EXPECT_EQ(s.over_compile.missing_baseline, 1);
  EXPECT_DOUBLE_EQ(*s.over_compile.arithmetic_mean, (2 + 1 + 0.25) / 3);
  EXPECT_DOUBLE_EQ(s.cost_usd, 2.0);

  std::string md = render_markdown(s);
  EXPECT_TRUE(has(md, "| fast_1 | 0.500 | 0.167 |")) << md;
  EXPECT_TRUE(has(md, "| fast_1.5 | 0.333 |")) << md;
  EXPECT_TRUE(has(md, "Correct: 4/6 (66.7%)")) << md;
  EXPECT_TRUE(has(md, "| a | correct | 1 | 4 | 2 | 4.00x | 2.00x |")) << md;
  std::string csv = render_csv(s);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // header + six tasks
  auto j = s.to_json();
  EXPECT_DOUBLE_EQ(j["over_eager"]["fast_p"]["fast_1.5"].get<double>(), 2.0 / 6);
  EXPECT_EQ(j["counts"]["correct"], 4);
  EXPECT_EQ(j["tasks"].size(), 6u);
}

TEST(Summary, TasksPerHourCountsOnlyTimeSomeTaskWasRunning) {
  // Two runs of one suite a day apart (a rerun continued it): the idle day is not the suite's time.
  std::vector<TaskRecord> tasks{task("a", TaskVerdict::correct, 1, 2, 2), task("b", TaskVerdict::correct, 1, 2, 2),
                                task("c", TaskVerdict::measured, {}, {}, {}), task("d", TaskVerdict::running, {}, {}, {})};
  tasks[0].started_at = 1000, tasks[0].finished_at = 2000;
  tasks[1].started_at = 1500, tasks[1].finished_at = 2800;    // overlaps a: 1000..2800 is one stretch
  tasks[2].started_at = 90000, tasks[2].finished_at = 90600;  // the next day
  tasks[3].started_at = 90100;                                // still running: not in the span
  auto s = summarize("optimize", "x", tasks);
  EXPECT_DOUBLE_EQ(s.span_s, 1800 + 600);
  ASSERT_TRUE(s.tasks_per_hour);
  EXPECT_DOUBLE_EQ(*s.tasks_per_hour, 3 / (2400.0 / 3600.0));
}

TEST(Summary, TasksPerHourSpansFirstStartToLastFinishAndLanesAddUp) {
  std::vector<TaskRecord> tasks{task("a", TaskVerdict::correct, 1, 2, 2), task("b", TaskVerdict::problem_error, {}, {}, {}),
                                task("c", TaskVerdict::crashed, {}, {}, {})};
  tasks[0].started_at = 1000;
  tasks[0].finished_at = 2800;
  tasks[1].started_at = 1500;
  tasks[1].finished_at = 1600;
  tasks[2].started_at = 2000;
  tasks[2].finished_at = 4600;  // the span is 3600 s: three tasks an hour
  for (auto& t : tasks) {
    t.lane = t.name == "a" ? "gpu0" : "gpu1";
    t.gpu_busy_s = 10;
    t.wall_s = t.finished_at - t.started_at;
  }
  auto s = summarize("optimize", "x", tasks);
  ASSERT_TRUE(s.tasks_per_hour);
  EXPECT_DOUBLE_EQ(*s.tasks_per_hour, 3.0);
  ASSERT_EQ(s.lanes.size(), 2u);
  EXPECT_EQ(s.lanes[1].lane, "gpu1");
  EXPECT_EQ(s.lanes[1].tasks, 2);
  EXPECT_DOUBLE_EQ(s.lanes[1].busy_s, 20);
  EXPECT_EQ(s.problem_errors, 1);
  EXPECT_EQ(s.crashed, 1);
}

TEST(Summary, BaselinesModeShowsPhysicsAndLabelsCpuTimes) {
  auto a = task("relu", TaskVerdict::measured, {}, 4.0, 2.0);
  a.floor_ms = 1.0;
  a.device = "cpu";
  auto b = task("bad", TaskVerdict::problem_error, {}, {}, {});
  b.detail = "bad.py: get_inputs() is missing";
  auto s = summarize("baselines", "", {a, b});
  EXPECT_FALSE(s.correct_rate);
  ASSERT_TRUE(s.physics_geomean);
  EXPECT_DOUBLE_EQ(*s.physics_geomean, 4.0);
  EXPECT_DOUBLE_EQ(*s.compile_over_eager_geomean, 2.0);
  std::string md = render_markdown(s);
  EXPECT_TRUE(has(md, "CPU times")) << md;
  EXPECT_TRUE(has(md, "| relu | measured | 4 | 2 | 2.00x | 1 |")) << md;
  EXPECT_TRUE(has(md, "- bad (problem_error): bad.py: get_inputs() is missing")) << md;
}

TEST(Summary, CpuBaselinesPrintNoRooflineFigures) {
  auto a = task("relu", TaskVerdict::measured, {}, 4.0, 2.0);
  a.device = "cpu";  // the baseline runner records no floor on a CPU
  a.flops = 2000000000;
  auto s = summarize("baselines", "", {a});
  EXPECT_FALSE(s.physics_geomean);
  std::string md = render_markdown(s);
  EXPECT_FALSE(has(md, "roofline allows")) << md;
  EXPECT_FALSE(has(md, "floor ms")) << md;
  EXPECT_FALSE(has(md, "eager/floor")) << md;
  EXPECT_TRUE(has(md, "No roofline figures")) << md;
  EXPECT_TRUE(has(md, "| task | verdict | eager ms | compile ms | compile/eager | GFLOP | MB |")) << md;
  EXPECT_TRUE(has(md, "| relu | measured | 4 | 2 | 2.00x | 2 |")) << md;
}

// One reader for both files a task record lives in (the task's result.json, the suite's results/<name>.json).
TEST(TaskRecord, ReadFromAFileAbsentCutShortOrWhole) {
  cutegen::testing::TempDir dir;
  const auto file = dir.path / "result.json";
  auto absent = read_task_record(file);
  ASSERT_TRUE(absent.ok()) << absent.error().message;
  EXPECT_FALSE(absent->has_value());
  ASSERT_TRUE(cutegen::write_file_atomic(file, "{\"name\": \"x\", \"verd").ok());
  auto cut = read_task_record(file);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().message, file.string() + ": not JSON (cut short or edited?)");
  ASSERT_TRUE(cutegen::write_file_atomic(file, task("x", TaskVerdict::correct, 0.5, 1.0, std::nullopt).to_json().dump()).ok());
  auto whole = read_task_record(file);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  ASSERT_TRUE(whole->has_value());
  EXPECT_EQ((*whole)->name, "x");
}

TEST(TaskRecord, RoundTripsAndNamesABadField) {
  TaskRecord r = task("x", TaskVerdict::correct, 0.5, 1.0, std::nullopt);
  r.number = 19;
  r.sol_pct = 80;
  r.tokens = 1234;
  r.lane = "gpu1";
  auto back = TaskRecord::from_json(r.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), r.to_json());
  auto j = r.to_json();
  j["tokens"] = "many";
  auto bad = TaskRecord::from_json(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("tokens"), std::string::npos);
  j = r.to_json();
  j["verdict"] = "great";
  EXPECT_FALSE(TaskRecord::from_json(j).ok());
}

// fast_p at any p (the suite page's curves) agrees with the table's four values and counts only
// correct tasks with the baseline.
TEST(Summary, FastPAtAnyPIsTheTablesDefinition) {
  std::vector<TaskRecord> tasks{task("a", TaskVerdict::correct, 1.0, 4.0, 2.0),
                                task("b", TaskVerdict::correct, 1.0, 2.0, std::nullopt),
                                task("c", TaskVerdict::no_correct_kernel, 1.0, 9.0, 9.0),
                                task("d", TaskVerdict::correct, 2.0, 1.0, 0.5)};
  auto s = summarize("optimize", "x", tasks);
  for (size_t i = 0; i < kFastP.size(); ++i) {
    EXPECT_EQ(fast_p(s.tasks, Baseline::eager, kFastP[i]), s.over_eager.fast_p[i]);
    EXPECT_EQ(fast_p(s.tasks, Baseline::compile, kFastP[i]), s.over_compile.fast_p[i]);
  }
  EXPECT_DOUBLE_EQ(fast_p(tasks, Baseline::eager, 3.9), 0.25);
  EXPECT_DOUBLE_EQ(fast_p(tasks, Baseline::eager, 4.0), 0.0);
  EXPECT_FALSE(counted_speedup(tasks[2], Baseline::eager)) << "a task without a correct kernel has no speedup";
  EXPECT_FALSE(counted_speedup(tasks[1], Baseline::compile));
  EXPECT_EQ(fast_p({}, Baseline::eager, 0), 0);
  EXPECT_EQ(format_speedup(std::nullopt), "—");
  EXPECT_EQ(format_ms(0.52617), "0.5262");
}
