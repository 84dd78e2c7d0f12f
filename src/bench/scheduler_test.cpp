#include "bench/scheduler.h"
#include "bench/summary.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
using namespace cutegen::bench;
namespace fs = std::filesystem;

namespace {
using cutegen::testing::TempDir;

// Scripted tasks: each run is counted; the verdict comes from the name.
class FakeRunner final : public TaskRunner {
 public:
  explicit FakeRunner(const SuiteDir* suite = nullptr) : suite_(suite) {}
  TaskRun run(const ProblemTask& task, const Lane& lane, int) override {
    {
      std::lock_guard<std::mutex> g(mu);
      ++runs[task.name];
      lanes.insert(lane.name);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    TaskRun r;
    if (task.name.find("bad") != std::string::npos) {
      r.record.verdict = TaskVerdict::problem_error;
      r.record.detail = "bad.py: no Model";
    } else if (task.name.find("crash") != std::string::npos) {
      r.record.verdict = TaskVerdict::crashed;
      r.record.detail = "killed by signal 11";
    } else if (task.name.find("nokey") != std::string::npos) {
      r.record.verdict = TaskVerdict::not_started;
      r.record.detail = "OPENAI_API_KEY is not set";
      r.stop_suite = true;
    } else {
      r.record.verdict = TaskVerdict::correct;
      r.record.best_ms = 1;
      r.record.cost_usd = cost_per_task;
      // What a real task leaves: its LLM usage, which the suite budget reads.
      if (suite_)
        (void)write_file_atomic(suite_->task_dir(task.name) / "usage.jsonl",
                                fmt::format("{{\"input_tokens\": 100, \"output_tokens\": 50, \"cost_usd\": {}}}\n",
                                            cost_per_task));
    }
    return r;
  }
  std::mutex mu;
  std::map<std::string, int> runs;
  std::set<std::string> lanes;
  double cost_per_task = 1.0;

 private:
  const SuiteDir* suite_;
};

std::vector<ProblemTask> make_tasks(const std::vector<std::string>& names) {
  std::vector<ProblemTask> out;
  for (const auto& n : names) out.push_back({n, "/problems/" + n + ".py", std::nullopt});
  return out;
}

Manifest manifest(const std::vector<ProblemTask>& tasks) { return {"optimize", "replay:x", {{"steps", "2"}}, tasks}; }

SchedulerOptions options(int jobs, int lanes = 1) {
  SchedulerOptions o;
  o.jobs = jobs;
  for (int i = 0; i < lanes; ++i) o.lanes.push_back({fmt::format("gpu{}", i), std::to_string(i), "cuda:0", "", ""});
  o.host = "test";
  return o;
}

std::map<std::string, TaskVerdict> verdicts(const SuiteDir& suite) {
  std::map<std::string, TaskVerdict> out;
  auto collected = suite.collect();
  EXPECT_TRUE(collected.damaged.empty());
  for (const auto& r : collected.records) out[r.name] = r.verdict;
  return out;
}
}  // namespace

TEST(Scheduler, RunsEveryTaskOnceOverTheLanesAndARerunSkipsWhatIsOver) {
  TempDir t;
  auto tasks = make_tasks({"a", "b", "bad", "c", "crash", "d"});
  auto suite = SuiteDir::open(t.path / "s", manifest(tasks));
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  FakeRunner runner;
  Scheduler first(*suite, runner, options(4, 2));
  auto r = first.run(tasks);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ran, 6);
  EXPECT_TRUE(r->stopped.empty());
  for (const auto& [name, n] : runner.runs) EXPECT_EQ(n, 1) << name;
  EXPECT_EQ(runner.lanes, (std::set<std::string>{"gpu0", "gpu1"}));
  auto v = verdicts(*suite);
  EXPECT_EQ(v["a"], TaskVerdict::correct);
  EXPECT_EQ(v["bad"], TaskVerdict::problem_error);
  EXPECT_EQ(v["crash"], TaskVerdict::crashed);
  auto rec = suite->read_record("a");
  ASSERT_TRUE(rec.ok() && *rec);
  EXPECT_EQ((*rec)->attempts, 1);
  EXPECT_EQ((*rec)->host, "test");
  EXPECT_GT((*rec)->finished_at, 0);

  // The same suite again: nothing is run twice; crashed stays crashed unless asked.
  Scheduler second(*suite, runner, options(4, 2));
  r = second.run(tasks);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 0);
  EXPECT_EQ(r->skipped, 6);
  auto retry = options(2);
  retry.retry_crashed = true;
  Scheduler third(*suite, runner, retry);
  r = third.run(tasks);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 1);
  EXPECT_EQ(runner.runs["crash"], 2);
  EXPECT_EQ(runner.runs["a"], 1);
  EXPECT_EQ((*suite->read_record("crash"))->attempts, 2);
}

TEST(Scheduler, ATaskLockedByAnotherSchedulerIsNeverRunHere) {
  TempDir t;
  auto tasks = make_tasks({"a", "b", "c"});
  auto suite = SuiteDir::open(t.path / "s", manifest(tasks));
  ASSERT_TRUE(suite.ok());
  // Another scheduler (flock on another descriptor behaves as another process) holds b.
  auto held = FileLock::try_lock(suite->lock_path("b"));
  ASSERT_TRUE(held.ok() && held->held());
  FakeRunner runner;
  Scheduler s(*suite, runner, options(3));
  auto r = s.run(tasks);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 2);
  EXPECT_EQ(r->skipped, 1);
  EXPECT_EQ(runner.runs.count("b"), 0u);
  EXPECT_EQ(verdicts(*suite)["b"], TaskVerdict::running);
  held->release();
  EXPECT_EQ(verdicts(*suite)["b"], TaskVerdict::not_started);
  Scheduler again(*suite, runner, options(3));
  ASSERT_TRUE(again.run(tasks).ok());
  EXPECT_EQ(runner.runs["b"], 1);
}

TEST(Scheduler, ASuiteBudgetLeavesTheRestNotStartedWithTheReasonAndALargerOneContinues) {
  TempDir t;
  auto tasks = make_tasks({"a", "b", "c", "d", "e"});
  auto suite = SuiteDir::open(t.path / "s", manifest(tasks));
  ASSERT_TRUE(suite.ok());
  FakeRunner runner(&*suite);
  runner.cost_per_task = 1.0;
  auto o = options(1);
  o.budget.max_cost_usd = 2.0;  // checked before each start: two tasks fit
  Scheduler s(*suite, runner, o);
  auto r = s.run(tasks);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 2);
  EXPECT_EQ(r->not_started, 3);
  EXPECT_NE(r->stopped.find("$2.00"), std::string::npos) << r->stopped;
  auto rec = suite->read_record("e");
  ASSERT_TRUE(rec.ok() && *rec);
  EXPECT_EQ((*rec)->verdict, TaskVerdict::not_started);
  EXPECT_NE((*rec)->detail.find("budget"), std::string::npos);
  EXPECT_DOUBLE_EQ(suite->spend().cost_usd, 2.0);
  EXPECT_EQ(suite->spend().tokens, 300);

  o.budget.max_cost_usd = 10.0;
  Scheduler more(*suite, runner, o);
  r = more.run(tasks);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 3);
  for (const auto& [name, v] : verdicts(*suite)) EXPECT_EQ(v, TaskVerdict::correct) << name;
  for (const auto& [name, n] : runner.runs) EXPECT_EQ(n, 1) << name;
}

TEST(Scheduler, AWallClockBudgetOfZeroStartsNothing) {
  TempDir t;
  auto tasks = make_tasks({"a", "b"});
  auto suite = SuiteDir::open(t.path / "s", manifest(tasks));
  ASSERT_TRUE(suite.ok());
  FakeRunner runner;
  auto o = options(1);
  o.budget.max_wall_s = 0;
  Scheduler s(*suite, runner, o);
  auto r = s.run(tasks);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 0);
  EXPECT_EQ(r->not_started, 2);
  EXPECT_NE(r->stopped.find("wall-clock"), std::string::npos);
}

TEST(Scheduler, ASetupFailureStopsTheSuiteInsteadOfFailingEveryTask) {
  TempDir t;
  auto tasks = make_tasks({"a_nokey", "b", "c"});
  auto suite = SuiteDir::open(t.path / "s", manifest(tasks));
  ASSERT_TRUE(suite.ok());
  FakeRunner runner;
  Scheduler s(*suite, runner, options(1));
  auto r = s.run(tasks);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->stopped.find("OPENAI_API_KEY"), std::string::npos) << r->stopped;
  EXPECT_EQ(runner.runs.size(), 1u);
  EXPECT_EQ(verdicts(*suite)["b"], TaskVerdict::not_started);
}

TEST(SuiteDir, ARerunMustKeepTheSettingsButMayAddTasks) {
  TempDir t;
  auto tasks = make_tasks({"a", "b"});
  ASSERT_TRUE(SuiteDir::open(t.path / "s", manifest(tasks)).ok());
  auto wider = manifest(make_tasks({"a", "c"}));
  auto s = SuiteDir::open(t.path / "s", wider);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->manifest().tasks.size(), 3u);
  auto other = manifest(tasks);
  other.settings["steps"] = "5";
  auto refused = SuiteDir::open(t.path / "s", other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("steps was \"2\", now \"5\""), std::string::npos) << refused.error().message;
  auto moved = manifest(make_tasks({"a"}));
  moved.tasks[0].path = "/elsewhere/a.py";
  EXPECT_FALSE(SuiteDir::open(t.path / "s", moved).ok());
  // Not a suite: a directory with other files is refused untouched.
  ASSERT_TRUE(write_file_atomic(t.path / "other/file.txt", "x").ok());
  EXPECT_FALSE(SuiteDir::open(t.path / "other", manifest(tasks)).ok());
  EXPECT_FALSE(fs::exists(t.path / "other/suite.json"));
  EXPECT_FALSE(SuiteDir::open_existing(t.path / "other").ok());
}

// Issue 32: one damaged results/*.json stopped `bench status` and `bench report` for the whole suite.
// Now each damaged record is listed with its file and what is wrong, and only that task is left out.
TEST(SuiteDir, DamagedRecordsAreListedAndSkippedNotFatal) {
  TempDir t;
  auto tasks = make_tasks({"a", "b", "cut", "typed", "unstarted"});
  auto suite = SuiteDir::open(t.path / "s", manifest(tasks));
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  FakeRunner runner(&*suite);
  Scheduler s(*suite, runner, options(1));
  ASSERT_TRUE(s.run(make_tasks({"a", "b", "cut", "typed"})).ok());
  auto cut = read_file(suite->result_path("cut"));
  ASSERT_TRUE(cut.ok());
  ASSERT_TRUE(write_file_atomic(suite->result_path("cut"), cut->substr(0, cut->size() / 2)).ok());
  ASSERT_TRUE(write_file_atomic(suite->result_path("typed"), R"({"verdict": "correct", "best_ms": "fast"})").ok());
  // A usage line of the wrong types (a hand edit) is not a reason to fail either.
  ASSERT_TRUE(write_file_atomic(suite->task_dir("b") / "usage.jsonl",
                                "{\"input_tokens\": \"many\", \"replayed\": \"no\", \"cost_usd\": 1}\n").ok());

  auto collected = suite->collect();
  std::set<std::string> names;
  for (const auto& r : collected.records) names.insert(r.name);
  EXPECT_EQ(names, (std::set<std::string>{"a", "b", "unstarted"}));
  ASSERT_EQ(collected.damaged.size(), 2u);
  EXPECT_EQ(collected.damaged[0].task, "cut");
  EXPECT_EQ(collected.damaged[0].line(), suite->result_path("cut").string() + ": not JSON (cut short or edited?)");
  EXPECT_EQ(collected.damaged[1].task, "typed");
  EXPECT_NE(collected.damaged[1].line().find("typed.json: task record: field 'best_ms' has the wrong type"),
            std::string::npos)
      << collected.damaged[1].line();
  EXPECT_DOUBLE_EQ(suite->spend().cost_usd, 4.0);  // each task's line, b's damaged one included

  auto summary = summarize("optimize", "replay:x", collected.records, collected.damaged);
  EXPECT_EQ(summary.total, 3);
  EXPECT_EQ(summary.correct, 2);
  EXPECT_EQ(summary.to_json()["counts"]["skipped_damaged"], 2);
  std::string md = render_markdown(summary);
  EXPECT_NE(md.find("**2 tasks skipped**"), std::string::npos) << md;
  EXPECT_NE(md.find("- " + suite->result_path("cut").string() + ": not JSON"), std::string::npos) << md;
}

TEST(Summary, TaskNamesAndDetailsFromFilesAreShownEscapedInTheTables) {
  TaskRecord r;
  r.name = "evil\x1b]8;;http://x/\x07name";
  r.verdict = TaskVerdict::problem_error;
  r.detail = "import failed\r\x1b[2Kall good";
  std::string md = render_markdown(summarize("optimize", "replay:\x1b[31m", {r}));
  EXPECT_EQ(md.find('\x1b'), std::string::npos) << md;
  EXPECT_EQ(md.find('\r'), std::string::npos) << md;
  EXPECT_NE(md.find("| evil\\x1b]8;;http://x/\\x07name | problem_error |"), std::string::npos) << md;
  EXPECT_NE(md.find("import failed\\r\\x1b[2Kall good"), std::string::npos) << md;
}
