#include "report/run_view.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/fs.h"
#include "common/json_text.h"
#include "common/sha256.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

const fs::path kRunFixture = fs::path(CUTEGEN_REPORT_TESTDATA) / "relu-run";

// A copy of the fixture the test may change.
class RunCopy {
 public:
  RunCopy() {
    dir_ = *make_unique_dir(fs::temp_directory_path(), "cutegen-view-");
    fs::copy(kRunFixture, dir_ / "run", fs::copy_options::recursive);
  }
  ~RunCopy() { fs::remove_all(dir_); }
  fs::path run() const { return dir_ / "run"; }
  // Rewrites events.jsonl through `edit`, one parsed event at a time.
  void edit_events(const std::function<void(nlohmann::json&)>& edit) const {
    std::string text = *read_file(run() / "events.jsonl"), out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t nl = text.find('\n', pos);
      auto e = nlohmann::json::parse(text.substr(pos, nl - pos));
      edit(e);
      out += dump_json(e) + "\n";
      pos = nl + 1;
    }
    ASSERT_TRUE(write_file_atomic(run() / "events.jsonl", out).ok());
  }

 private:
  fs::path dir_;
};

}  // namespace

TEST(RunView, ReadsTheFixtureRunsStory) {
  auto v = load_run_view(kRunFixture);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_TRUE(v->finished);
  EXPECT_TRUE(v->notes.empty()) << v->notes.front();
  EXPECT_EQ(v->dir.filename(), "relu-run");
  EXPECT_EQ(load_run_view(kRunFixture.string() + "/")->dir.filename(), "relu-run");
  const RunSummary& s = v->summary;
  EXPECT_EQ(s.problem_name, "relu");
  EXPECT_EQ(s.llm, "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(s.profile_policy, "2");
  EXPECT_EQ(v->precision, "strict");
  EXPECT_EQ(s.stop_reason, "steps");
  EXPECT_EQ(s.example_shown, "library/elementwise.cu");
  EXPECT_EQ(s.syntheses, 1);
  EXPECT_EQ(s.llm_calls, 9);
  EXPECT_DOUBLE_EQ(*s.baselines.eager->median_ms(), 0.5573);
  ASSERT_TRUE(s.floor);
  EXPECT_DOUBLE_EQ(s.floor->hbm_gbps, 4300);

  // Compile error, its repair, step 1 (kept), step 2 (slower), step 3 (mismatch, undone), step 4 (kept).
  ASSERT_EQ(v->attempts.size(), 6u);
  std::vector<std::string> labels, fates;
  for (const auto& a : v->attempts) {
    labels.push_back(a.label);
    fates.push_back(std::string(to_string(a.fate)));
    EXPECT_TRUE(a.source) << a.label << " has its kernel source";
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"synthesis", "synthesis-repair1", "step1", "step2", "step3", "step4"}));
  EXPECT_EQ(fates, (std::vector<std::string>{"failed", "accepted", "accepted", "rolled back", "failed", "accepted"}));
  EXPECT_EQ(v->attempts[0].evaluation.verdict, Verdict::compile_error);
  EXPECT_EQ(v->attempts[4].evaluation.verdict, Verdict::mismatch);
  EXPECT_EQ(v->best_attempt, 6);
  ASSERT_TRUE(s.best);
  EXPECT_DOUBLE_EQ(s.best->median_ms(), 0.5262);

  ASSERT_EQ(v->steps.size(), 4u);
  ASSERT_EQ(s.history.size(), 4u);
  EXPECT_EQ(v->steps[0].record.outcome, StepOutcome::accepted);
  EXPECT_EQ(v->steps[0].base, 2) << "step 1 started from the repaired synthesis";
  EXPECT_EQ(v->steps[1].record.outcome, StepOutcome::slower);
  EXPECT_EQ(v->steps[2].record.outcome, StepOutcome::undone);
  EXPECT_EQ(v->steps[2].record.verdict, Verdict::mismatch);
  EXPECT_EQ(v->steps[3].base, 3) << "step 4 started from step 1's kernel: steps 2 and 3 were rolled back";
  EXPECT_NE(v->steps[3].diff.find("+      __stcs("), std::string::npos) << v->steps[3].diff;
  EXPECT_NE(v->steps[3].diff.find("-    copy_aligned(frag, tY);"), std::string::npos) << v->steps[3].diff;
  EXPECT_EQ(v->steps[3].lines_removed, 1);

  ASSERT_EQ(v->profiles.size(), 1u);
  EXPECT_EQ(v->profiles[0].first_step, 2);
  EXPECT_EQ(v->profiles[0].kernel, 3);
  EXPECT_NE(v->profiles[0].summary.find("relu_tiles"), std::string::npos);
  EXPECT_EQ(v->first_profiled_step, 2);
}

TEST(RunView, CostAndTimeAddUpOverThePhases) {
  auto v = load_run_view(kRunFixture);
  ASSERT_TRUE(v.ok()) << v.error().message;
  long long tokens = 0;
  double cost = 0, seconds = 0;
  int calls = 0, evaluations = 0;
  for (const auto& p : v->phases) {
    tokens += p.tokens;
    cost += p.cost_usd;
    seconds += p.seconds;
    calls += p.llm_calls;
    evaluations += p.evaluations;
  }
  EXPECT_EQ(tokens, v->summary.tokens);
  EXPECT_NEAR(cost, v->summary.cost_usd, 1e-12);
  EXPECT_GT(cost, 0.1) << "priced as claude-sonnet-4-5";
  EXPECT_EQ(calls, 9);
  EXPECT_EQ(evaluations, 6);
  EXPECT_NEAR(seconds, v->wall_seconds, 1e-6);
  const PhaseCost& describe = v->phases[0];
  EXPECT_EQ(describe.phase, "describe");
  EXPECT_NEAR(describe.seconds, 38.42, 1e-6) << "from the run's marker to the problem event, and the decision after it";
  const PhaseCost& repair = v->phases[2];
  EXPECT_EQ(repair.phase, "repair");
  EXPECT_EQ(repair.llm_calls, 4) << "two diagnoses and two repairs";
  EXPECT_EQ(repair.evaluations, 1) << "the repaired synthesis; the undone repair is not evaluated";
}

TEST(RunView, RefusesWhatIsNotARun) {
  auto missing = load_run_view("/nonexistent/run");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such directory"), std::string::npos);
  auto dir = *make_unique_dir(fs::temp_directory_path(), "cutegen-view-");
  ASSERT_TRUE(write_file_atomic(dir / "notes.txt", "mine").ok());
  auto other = load_run_view(dir);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("is not a cutegen run"), std::string::npos) << other.error().message;
  ASSERT_TRUE(write_file_atomic(dir / ".cutegen-run", "{}").ok());
  auto empty = load_run_view(dir);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("has no events"), std::string::npos) << empty.error().message;
  fs::remove_all(dir);
}

TEST(RunView, RefusesALogOfAnotherFormat) {
  RunCopy copy;
  copy.edit_events([](nlohmann::json& e) { e["v"] = 1; });
  auto v = load_run_view(copy.run());
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("events.jsonl:1 was written by another cutegen (run log format 1"), std::string::npos)
      << v.error().message;
}

TEST(RunView, ADamagedEventNamesItsLine) {
  RunCopy copy;
  copy.edit_events([](nlohmann::json& e) {
    if (e["type"] == "eval" && e["what"] == "step2") e["evaluation"]["verdict"] = "splendid";
  });
  auto v = load_run_view(copy.run());
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("events.jsonl:"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("splendid"), std::string::npos) << v.error().message;

  RunCopy cost;
  cost.edit_events([](nlohmann::json& e) {
    if (e["type"] == "llm") e["response"]["usage"]["output_tokens"] = "many";
  });
  v = load_run_view(cost.run());
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("events.jsonl:3: the logged llm event cannot be read (its response does not read "
                                   "back: usage.output_tokens must be a non-negative integer)"),
            std::string::npos)
      << v.error().message;
}

TEST(RunView, AnUnfinishedRunIsShownSoFar) {
  RunCopy copy;
  std::string text = *read_file(copy.run() / "events.jsonl");
  text = text.substr(0, text.find("{\"decision\":\"stop\""));
  ASSERT_TRUE(write_file_atomic(copy.run() / "events.jsonl", text).ok());
  auto v = load_run_view(copy.run());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_FALSE(v->finished);
  EXPECT_EQ(v->summary.stop_reason, "");
  EXPECT_EQ(v->steps.size(), 4u);
}

TEST(RunView, AMissingOrAlteredKernelLosesItsDiffWithANote) {
  RunCopy copy;
  fs::remove(copy.run() / "steps/015-eval-step4/kernel.cu");
  ASSERT_TRUE(write_file_atomic(copy.run() / "steps/009-eval-step2/kernel.cu", "// not what was judged\n").ok());
  auto v = load_run_view(copy.run());
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->notes.size(), 2u);
  EXPECT_NE(v->notes[0].find("does not match the kernel the log evaluated"), std::string::npos) << v->notes[0];
  EXPECT_NE(v->notes[1].find("steps/015-eval-step4/kernel.cu is missing"), std::string::npos) << v->notes[1];
  EXPECT_TRUE(v->steps[1].diff.empty());
  EXPECT_FALSE(v->steps[1].diff_missing.empty());
  EXPECT_TRUE(v->steps[3].diff.empty());
  EXPECT_FALSE(v->steps[0].diff.empty());
}

TEST(RunView, ARunThatStartedFromTheSeedSaysSo) {
  // The fixture's first correct kernel, relabelled as --start seed logs it.
  RunCopy copy;
  copy.edit_events([](nlohmann::json& e) {
    if (e.value("type", "") == "eval" && e.value("what", "") == "synthesis-repair1") {
      e["what"] = e["attempt"]["stage"] = "seed";
      e["attempt"]["repair"] = 0;
    }
    if (e.value("type", "") == "decision" && e.value("key", "") == "synthesis1") {
      e["key"] = e["decision"] = "seed";
      e.erase("attempt");
    }
  });
  auto config = nlohmann::json::parse(*read_file(copy.run() / "config.json"));
  config["seed_pattern"] = "relu(x)";
  ASSERT_TRUE(write_file_atomic(copy.run() / "config.json", config.dump()).ok());
  auto v = load_run_view(copy.run());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->summary.seed_pattern, "relu(x)");
  EXPECT_EQ(v->summary.syntheses, 0);
  ASSERT_TRUE(v->best_attempt);  // the seed was the first best; the steps' story is unchanged
  EXPECT_EQ(v->best_attempt, load_run_view(kRunFixture)->best_attempt);
  EXPECT_NE(render_run_report(v->summary).find("The first kernel was cutegen's seed for y = relu(x)"), std::string::npos);
}

// `optimize --llm none` whose seed failed the judge: the seed's eval event, its `seed` decision and
// the stop. The stop line says how the seed failed, from that evaluation.
TEST(RunView, AFailedSeedsEvaluationIsWhatTheStopLineQuotes) {
  RunCopy copy;
  std::vector<nlohmann::json> events;
  std::string text = *read_file(copy.run() / "events.jsonl");
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    events.push_back(nlohmann::json::parse(text.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  nlohmann::json seed_eval;
  for (const auto& e : events)
    if (e.value("type", "") == "eval") {
      seed_eval = e;
      break;
    }
  ASSERT_TRUE(seed_eval.is_object());
  seed_eval["what"] = "seed";
  seed_eval["attempt"]["stage"] = "seed";
  seed_eval["evaluation"]["verdict"] = "mismatch";
  seed_eval["evaluation"]["reason"] = "trial 3 (scaled inputs) failed: mismatch";
  seed_eval["evaluation"].erase("time");
  nlohmann::json seed_decision = {{"type", "decision"}, {"key", "seed"}, {"decision", "seed"}, {"outcome", "failed"},
                                  {"verdict", "mismatch"}, {"v", 3}, {"t", seed_eval["t"]}};
  nlohmann::json stop = {{"type", "decision"}, {"key", "stop"}, {"decision", "stop"}, {"reason", "seed_failed"},
                         {"detail", "cumprod(x, dim=1)"}, {"v", 3}, {"t", seed_eval["t"]}};
  std::string out;
  for (const auto& e : {events.at(0), events.at(1), seed_eval, seed_decision, stop}) out += dump_json(e) + "\n";
  ASSERT_TRUE(write_file_atomic(copy.run() / "events.jsonl", out).ok());
  auto v = load_run_view(copy.run());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->summary.stop_reason, "seed_failed");
  ASSERT_TRUE(v->summary.failed_seed);
  EXPECT_EQ(v->summary.failed_seed->verdict_line(), "mismatch: trial 3 (scaled inputs) failed: mismatch");
  EXPECT_NE(stop_reason_text(v->summary)
                .find("the seed kernel for y = cumprod(x, dim=1) failed the judge: mismatch: trial 3 (scaled inputs) "
                      "failed: mismatch"),
            std::string::npos)
      << stop_reason_text(v->summary);
  // A run whose seed passed has none.
  EXPECT_FALSE(load_run_view(kRunFixture)->summary.failed_seed);
}

// A tuning after step 4 (agent/loop_tune.cpp's `tune` event and `tune4` decision) appended to the
// fixture: its chosen kernel is an attempt that becomes the best, and a step with its diff.
TEST(RunView, ATuningThatChoseFasterKnobsIsAnAttemptAndAStep) {
  RunCopy copy;
  const std::string base = *read_file(copy.run() / "steps/015-eval-step4/kernel.cu");
  const std::string tuned = base + "// tuned: K_THREADS=512\n";
  ASSERT_TRUE(write_file_atomic(copy.run() / "steps/016-eval-tune4/kernel.cu", tuned).ok());
  std::string text = *read_file(copy.run() / "events.jsonl");
  nlohmann::json step4_eval;
  std::size_t pos = 0, stop_at = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    auto e = nlohmann::json::parse(text.substr(pos, nl - pos));
    if (e.value("type", "") == "eval" && e.value("what", "") == "step4") step4_eval = e["evaluation"];
    if (e.value("key", "") == "stop") stop_at = pos;
    pos = nl + 1;
  }
  ASSERT_TRUE(step4_eval.is_object());
  ASSERT_GT(stop_at, 0u);
  nlohmann::json evaluation = step4_eval;
  evaluation["time"]["median_ms"] = 0.5;
  nlohmann::json tune = {{"type", "tune"}, {"key", sha256_hex(base)}, {"what", "tune4"}, {"v", 2},
                         {"tune", {{"summary", "chose K_THREADS=512"}, {"markdown", "| table |"}, {"source", tuned},
                                   {"default_kept", false}, {"evaluation", evaluation},
                                   {"table", {{"variants", {{{"verdict", "pass"}}, {{"verdict", "pass"}},
                                                            {{"compile", "rejected"}}}}}}}}};
  nlohmann::json decision = {{"type", "decision"}, {"key", "tune4"}, {"v", 2}, {"step", 4}, {"kind", "tuning"},
                             {"idea", "tuned the knobs (3 variants)"}, {"outcome", "accepted"},
                             {"note", "chose K_THREADS=512"}, {"time_ms", 0.5}, {"speedup", 1.05}};
  text.insert(stop_at, dump_json(tune) + "\n" + dump_json(decision) + "\n");
  ASSERT_TRUE(write_file_atomic(copy.run() / "events.jsonl", text).ok());

  auto v = load_run_view(copy.run());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_TRUE(v->notes.empty()) << v->notes.front();
  ASSERT_EQ(v->attempts.size(), 7u);
  const Attempt& t = v->attempts.back();
  EXPECT_EQ(t.label, "tune4");
  EXPECT_TRUE(t.tuning);
  EXPECT_EQ(t.step, 4);
  EXPECT_EQ(t.fate, AttemptFate::accepted);
  ASSERT_TRUE(t.source);
  EXPECT_EQ(v->best_attempt, 7);
  ASSERT_TRUE(v->summary.best);
  EXPECT_DOUBLE_EQ(v->summary.best->median_ms(), 0.5);
  ASSERT_FALSE(v->summary.history.empty());
  EXPECT_EQ(v->summary.history.back().kind, StepKind::tuning);
  const StepView& s = v->steps.back();
  EXPECT_EQ(s.attempts, std::vector<int>{7});
  EXPECT_EQ(s.base, 6);
  EXPECT_NE(s.diff.find("+// tuned: K_THREADS=512"), std::string::npos) << s.diff;
  // The first kernel is still the synthesis one, and the tuning's evaluations have their phase.
  EXPECT_EQ(v->attempts[1].fate, AttemptFate::accepted);
  int tuning_evals = -1;
  for (const auto& p : v->phases)
    if (p.phase == "tuning") tuning_evals = p.evaluations;
  EXPECT_EQ(tuning_evals, 3);  // two screened variants and the full evaluation
  EXPECT_NE(render_run_report(v->summary).find("| tuning after 4 | tuned the knobs (3 variants) | accepted |"),
            std::string::npos);
}
