// The loop's state machine on fakes: every transition, budgets, rollback, malformed answers, resume.
#include "agent/loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>

#include <fmt/format.h>

#include "agent/testdata/loop_fakes.h"
#include "common/fs.h"
#include "store/event_log.h"

using namespace cutegen;
using namespace cutegen::testing;
namespace fs = std::filesystem;

namespace {

std::string kernel(const std::string& markers) {
  return "#include <cutegen/kernel.h>\n" + markers +
         "extern \"C\" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out,\n"
         "                                 int32_t n_out, cudaStream_t stream) {\n"
         "  return 0;\n"
         "}\n";
}
std::string whole(const std::string& markers) { return "PLAN: vectorized\n```cuda\n" + kernel(markers) + "```\n"; }
std::string edit(const std::string& search, const std::string& replace, const std::string& notes = "") {
  return notes + "```\n<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n```\n";
}
std::string optimize(const std::string& idea, const std::string& search, const std::string& replace) {
  return edit(search, replace, "OPTIMIZATION: " + idea + "\nEXPECTED: faster\n\n");
}
const std::string kDiagnosis = "DIAGNOSIS: the layout rank is wrong\nFIX: use rank 2\n";

struct Harness {
  fs::path dir;
  ScriptedLlm* llm = nullptr;  // owned by client
  std::unique_ptr<LlmClient> client;
  MarkerEvaluator evaluator;
  FakePrompter prompter;
  CountingProfiler profiler;
  LoopOptions options;
  std::vector<std::string> progress;
  std::vector<Candidate> bests;
  BudgetLimits budget;
  std::function<void()> after_best;  // runs after each export

  Harness() {
    auto d = make_unique_dir(fs::temp_directory_path(), "cutegen-loop-test-");
    EXPECT_TRUE(d.ok());
    dir = *d;
    options.max_steps = 2;
    options.repair_budget = 2;
    options.max_restarts = 1;
    options.answer_retries = 1;
    reset_llm();
  }
  ~Harness() { fs::remove_all(dir); }
  void reset_llm() {
    auto backend = std::make_unique<ScriptedLlm>();
    llm = backend.get();
    LlmClientOptions o;
    o.budget = budget;
    auto c = LlmClient::create(std::move(backend), PriceTable{}, o);
    EXPECT_TRUE(c.ok());
    client = std::move(*c);
  }
  Result<LoopResult> run(bool resume = false) {
    auto journal = Journal::open(dir / "events.jsonl", resume);
    if (!journal) return journal.error();
    RunFiles files(dir);
    LoopObserver obs;
    obs.progress = [this](const LoopStatus&, const std::string& line) { progress.push_back(line); };
    obs.new_best = [this](const Candidate& c) -> Status {
      bests.push_back(c);
      if (after_best) after_best();
      return ok_status();
    };
    Loop loop(*client, evaluator, prompter, &profiler, *journal, files, options, obs);
    return loop.run();
  }
  std::string request_text(size_t i) const {
    std::string s;
    for (const auto& m : llm->requests.at(i).messages) s += m.text + "\n";
    return s;
  }
};

// synthesis correct at 1.0 ms; step 1 accepted (0.5 ms); step 2 slower (0.8 ms) and rolled back.
void script_happy(ScriptedLlm& llm) {
  llm.add("synthesis", whole("// TIME: 1.0\n"));
  llm.add("optimize", optimize("128-bit vectorized loads", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  llm.add("optimize", optimize("smaller blocks", "// TIME: 0.5\n", "// TIME: 0.8\n"));
}

}  // namespace

TEST(Loop, SynthesisThenOneAcceptedAndOneRolledBackStep) {
  Harness h;
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "steps");
  ASSERT_TRUE(r->best);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 0.5);
  EXPECT_NE(r->best->source.find("// TIME: 0.5"), std::string::npos);
  ASSERT_EQ(r->history.size(), 2u);
  EXPECT_EQ(r->history[0].outcome, StepOutcome::accepted);
  EXPECT_EQ(r->history[0].idea, "128-bit vectorized loads");
  EXPECT_EQ(r->history[1].outcome, StepOutcome::slower);
  EXPECT_EQ(h.bests.size(), 2u);  // synthesis, then step 1
  EXPECT_EQ(h.llm->remaining(), 0u);
  // The second step starts from the best kernel and its prompt carries the first step's outcome.
  std::string second = h.request_text(2);
  EXPECT_NE(second.find("history: 1 128-bit vectorized loads accepted"), std::string::npos) << second;
  EXPECT_NE(second.find("// TIME: 0.5"), std::string::npos);
  EXPECT_TRUE(fs::exists(h.dir / "steps/001-synthesize/prompt.md"));
  EXPECT_TRUE(fs::exists(h.dir / "steps/001-synthesize/answer.md"));
  // An edited kernel's directory records what the edit changed; a whole new file has no diff.
  std::vector<std::string> diffs;
  for (const auto& d : fs::directory_iterator(h.dir / "steps"))
    if (fs::exists(d.path() / "change.diff")) diffs.push_back(*read_file(d.path() / "change.diff"));
  ASSERT_EQ(diffs.size(), 2u);  // step 1 and step 2, each against the best it started from
  for (const auto& d : diffs) {
    EXPECT_NE(d.find("--- a/kernel.cu"), std::string::npos) << d;
    EXPECT_NE(d.find("-// TIME: "), std::string::npos) << d;
  }
}

// Each optimisation step's evaluation carries the bar its kernel must beat to be kept (the judge then skips
// other shapes for a kernel not below it); a first kernel carries none. With the best at 1.0 ms (IQR 0.01)
// and min_gain 0.02, the bar is 1.0 - max(0.01, 0.02); after step 1's 0.5 ms, 0.5 - max(0.01, 0.01).
TEST(Loop, AStepsEvaluationCarriesTheTimeItMustBeatAndAFirstKernelsNone) {
  Harness h;
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(h.evaluator.bars.size(), 3u);
  EXPECT_FALSE(h.evaluator.bars[0]);
  ASSERT_TRUE(h.evaluator.bars[1] && h.evaluator.bars[2]);
  EXPECT_DOUBLE_EQ(*h.evaluator.bars[1], 0.98);
  EXPECT_DOUBLE_EQ(*h.evaluator.bars[2], 0.49);
  // Not below the bar is never kept: the bar is no looser than the acceptance rule.
  EXPECT_EQ(r->history[1].outcome, StepOutcome::slower);
  // The step's line says what such a kernel was spared (the judge's skipped_checks_bar_ms), and only for it.
  auto spared = [&](const std::string& line) { return line.find("none of the checks only a kept kernel needs") != std::string::npos; };
  EXPECT_EQ(std::count_if(h.progress.begin(), h.progress.end(), spared), 1) << ::testing::PrintToString(h.progress);
  EXPECT_TRUE(std::any_of(h.progress.begin(), h.progress.end(), [&](const std::string& l) {
    return spared(l) && l.find("not below 0.4900 ms") != std::string::npos;
  })) << ::testing::PrintToString(h.progress);
}

TEST(Loop, APassingSeedIsTheFirstBestAndNoSynthesisIsAsked) {
  Harness h;
  h.options.seed_source = kernel("// TIME: 1.0\n// seed\n");
  h.llm->add("optimize", optimize("128-bit vectorized loads", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  h.llm->add("optimize", optimize("smaller blocks", "// TIME: 0.5\n", "// TIME: 0.8\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->started_from_seed);
  EXPECT_EQ(r->syntheses, 0);
  ASSERT_TRUE(r->best);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 0.5);
  EXPECT_NE(r->best->source.find("// seed"), std::string::npos);  // step 1 edited the seed
  ASSERT_FALSE(h.bests.empty());
  EXPECT_NE(h.bests.front().source.find("// seed"), std::string::npos);
  EXPECT_EQ(h.llm->remaining(), 0u);
  EXPECT_TRUE(fs::exists(h.dir / "steps/001-eval-seed/kernel.cu"));
  // Resumed, the seed's evaluation replays from the log like any other.
  const int evaluations = h.evaluator.evaluations;
  h.reset_llm();
  auto again = h.run(/*resume=*/true);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(h.evaluator.evaluations, evaluations);
  EXPECT_TRUE(again->started_from_seed);
}

TEST(Loop, AFailingSeedHandsOverToSynthesis) {
  Harness h;
  h.options.seed_source = kernel("// VERDICT: mismatch wrong values at 3 of 8 positions\n");
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->started_from_seed);
  EXPECT_EQ(r->syntheses, 1);
  ASSERT_TRUE(r->best);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 0.5);
  EXPECT_EQ(h.llm->remaining(), 0u);
  bool said = std::any_of(h.progress.begin(), h.progress.end(), [](const std::string& l) {
    return l.find("the seed kernel failed the judge") != std::string::npos;
  });
  EXPECT_TRUE(said);
}

TEST(Loop, SeedOnlyJudgesTheSeedAndStopsWithoutAnyLlmCall) {
  Harness h;  // its scripted LLM has no answers: any call would fail the run
  h.options.seed_source = kernel("// TIME: 1.0\n");
  h.options.seed_pattern = "relu(x)";
  h.options.seed_only = true;
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "seed");
  EXPECT_EQ(r->stop_detail, "relu(x)");
  EXPECT_EQ(r->llm_calls, 0);
  EXPECT_TRUE(r->example_shown.empty());  // no prompt showed one
  ASSERT_TRUE(r->best);
  EXPECT_EQ(h.bests.size(), 1u);  // best/ was exported

  Harness bad;
  bad.options.seed_source = kernel("// VERDICT: mismatch wrong values\n");
  bad.options.seed_only = true;
  auto failed = bad.run();
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_EQ(failed->stop_reason, "seed_failed");
  EXPECT_FALSE(failed->best);
  EXPECT_EQ(failed->llm_calls, 0);
  // How it failed travels with the result: the run's last line and the suite's task line say why.
  ASSERT_TRUE(failed->failed_seed);
  EXPECT_EQ(failed->failed_seed->verdict_line(), "mismatch: wrong values");
  EXPECT_FALSE(r->failed_seed);  // a seed that passed
}

TEST(Loop, TextThatIsNotUtf8NeverStopsTheRun) {
  // An LLM note with a byte that is not UTF-8, and a long one whose clip lands inside a multi-byte
  // character: both reach the next prompt through the step history, which is hashed and journalled.
  Harness h;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("loads \xff wide", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  std::string arrows;
  for (int i = 0; i < 100; ++i) arrows += "\xE2\x86\x92";  // 300 bytes of U+2192
  h.llm->add("optimize", optimize("smaller " + arrows, "// TIME: 0.5\n", "// TIME: 0.8\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->history.size(), 2u);
  EXPECT_EQ(r->history[1].outcome, StepOutcome::slower);
  EXPECT_EQ(h.llm->remaining(), 0u);
}

TEST(Loop, CompileErrorIsDiagnosedThenRepairedWithAnEdit) {
  Harness h;
  h.options.max_steps = 0;
  h.llm->add("synthesis", whole("// VERDICT: compile_error rank mismatch in partition\n"));
  h.llm->add("diagnose", kDiagnosis);
  h.llm->add("repair", edit("// VERDICT: compile_error rank mismatch in partition\n", "// TIME: 2.0\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->best);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 2.0);
  EXPECT_NE(h.request_text(1).find("evidence for compile_error"), std::string::npos);  // diagnose sees evidence
  EXPECT_NE(h.request_text(2).find("the layout rank is wrong"), std::string::npos);    // repair sees diagnosis
  EXPECT_EQ(r->stop_reason, "steps");
}

TEST(Loop, RepairAnsweredWithAWholeFileIsSentBackAskingForEdits) {
  Harness h;
  h.options.max_steps = 0;
  h.llm->add("synthesis", whole("// VERDICT: mismatch wrong values\n"));
  h.llm->add("diagnose", kDiagnosis);
  h.llm->add("repair", whole("// TIME: 1.0\n"));  // a rewrite, not a localized edit
  h.llm->add("repair", edit("// VERDICT: mismatch wrong values\n", "// TIME: 1.0\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->best);
  // The retry carries the refused answer and the reason.
  ASSERT_EQ(h.llm->requests.size(), 4u);
  const auto& retry = h.llm->requests[3].messages;
  ASSERT_EQ(retry.size(), 4u);
  EXPECT_EQ(retry[2].role, Role::assistant);
  EXPECT_NE(retry[3].text.find("could not be used"), std::string::npos);
  EXPECT_NE(retry[3].text.find("SEARCH"), std::string::npos) << retry[3].text;
}

TEST(Loop, UnusableAnswersAreFedBackWithTheReason) {
  Harness h;
  h.options.max_steps = 1;
  h.llm->add("synthesis", "I would write a kernel that vectorizes loads.");  // no code
  h.llm->add("synthesis", whole("// VERDICT: mismatch off by one\n"));
  h.llm->add("diagnose", kDiagnosis);
  h.llm->add("repair", edit("// this line is not in the kernel\n", "// TIME: 1.0\n"));  // bad anchor
  h.llm->add("repair", edit("// VERDICT: mismatch off by one\n", "// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("unroll", "// TIME: 1.0\n", "// TIME: 0.9\n"), FinishReason::length);  // cut off
  h.llm->add("optimize", optimize("unroll", "// TIME: 1.0\n", "// TIME: 0.9\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.llm->remaining(), 0u);
  ASSERT_EQ(r->history.size(), 1u);
  EXPECT_EQ(r->history[0].outcome, StepOutcome::accepted);
  auto last_user = [&](size_t i) { return h.llm->requests.at(i).messages.back().text; };
  EXPECT_NE(last_user(1).find("could not be used"), std::string::npos);
  EXPECT_NE(last_user(4).find("could not be used"), std::string::npos);  // bad anchor explained
  EXPECT_NE(last_user(6).find("could not be used"), std::string::npos);  // truncated explained
}

TEST(Loop, AnEditThatStaysUnusableEndsTheStepAsUnusable) {
  Harness h;
  h.options.max_steps = 1;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("tile", "// absent\n", "// TIME: 0.1\n"));
  h.llm->add("optimize", optimize("tile", "// absent again\n", "// TIME: 0.1\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->history.size(), 1u);
  EXPECT_EQ(r->history[0].outcome, StepOutcome::unusable);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 1.0);
}

TEST(Loop, OptimizationWithoutItsNameIsSentBack) {
  Harness h;
  h.options.max_steps = 1;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", edit("// TIME: 1.0\n", "// TIME: 0.5\n"));  // no OPTIMIZATION: note
  h.llm->add("optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(h.llm->requests[2].messages.back().text.find("OPTIMIZATION"), std::string::npos);
  EXPECT_EQ(r->history[0].idea, "vectorize");
}

TEST(Loop, FailedRepairsRestartSynthesisWithTheFailureHistory) {
  Harness h;
  h.options.max_steps = 0;
  h.options.repair_budget = 1;
  h.llm->add("synthesis", whole("// VERDICT: unwritten half the outputs never written\n"));
  h.llm->add("diagnose", kDiagnosis);
  h.llm->add("repair", edit("// VERDICT: unwritten half the outputs never written\n",
                            "// VERDICT: mismatch still wrong\n"));
  h.llm->add("restart", whole("// TIME: 3.0\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->best);
  EXPECT_EQ(r->syntheses, 2);
  std::string restart = h.request_text(3);
  EXPECT_NE(restart.find("failure: mismatch after 1 repair rounds: still wrong [mismatch]"), std::string::npos)
      << restart;
}

TEST(Loop, NoCorrectKernelAfterEveryRestartIsAResultNotAnError) {
  Harness h;
  h.options.repair_budget = 0;
  h.options.max_restarts = 1;
  h.llm->add("synthesis", whole("// VERDICT: crash segfault\n"));
  h.llm->add("restart", whole("// VERDICT: timeout hang\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->best);
  EXPECT_EQ(r->stop_reason, "no_correct_kernel");
  EXPECT_TRUE(h.bests.empty());
}

TEST(Loop, AStepThatCannotBeMadeCorrectIsRecordedAndTheBestKept) {
  Harness h;
  h.options.max_steps = 1;
  h.options.repair_budget = 1;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("split-k", "// TIME: 1.0\n", "// VERDICT: nondeterministic race\n"));
  h.llm->add("diagnose", kDiagnosis);
  h.llm->add("repair", edit("// VERDICT: nondeterministic race\n", "// VERDICT: nondeterministic still racy\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->history.size(), 1u);
  EXPECT_EQ(r->history[0].outcome, StepOutcome::incorrect);
  EXPECT_NE(r->history[0].note.find("nondeterministic"), std::string::npos);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 1.0);
  EXPECT_EQ(h.bests.size(), 1u);
}

TEST(Loop, AnImprovementWithinTheNoiseIsRejected) {
  Harness h;
  h.options.max_steps = 1;
  h.llm->add("synthesis", whole("// TIME: 1.0\n// IQR: 0.05\n"));
  h.llm->add("optimize", optimize("prefetch", "// TIME: 1.0\n", "// TIME: 0.97\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->history[0].outcome, StepOutcome::slower);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 1.0);
}

TEST(Loop, PlateauStopsTheTask) {
  Harness h;
  h.options.max_steps = 5;
  h.options.plateau_steps = 2;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("a", "// TIME: 1.0\n", "// TIME: 1.2\n"));
  h.llm->add("optimize", optimize("b", "// TIME: 1.0\n", "// TIME: 1.1\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "plateau");
  EXPECT_EQ(r->history.size(), 2u);
}

TEST(Loop, ReachingTheTargetSolStopsTheTask) {
  Harness h;
  h.options.max_steps = 5;
  h.options.target_sol_pct = 80;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));                                 // SOL 50 %
  h.llm->add("optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.55\n"));  // SOL 91 %
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "target");
  EXPECT_EQ(r->history.size(), 1u);
}

TEST(Loop, ASpentBudgetStopsCleanlyWithTheBestSoFar) {
  Harness h;
  h.budget.max_calls = 2;
  h.reset_llm();
  h.options.max_steps = 5;
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "budget");
  ASSERT_TRUE(r->best);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 0.5);
  EXPECT_EQ(h.llm->requests.size(), 2u);
}

TEST(Loop, ATaskBudgetStopsTheTaskLikeTheRunBudget) {
  Harness h;
  Budget task(BudgetLimits{.max_calls = 1}, "task");
  h.options.task_budget = &task;
  h.options.max_steps = 5;
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "budget");
  ASSERT_TRUE(r->best);  // the synthesis was paid for and kept
  EXPECT_EQ(h.llm->requests.size(), 1u);
  EXPECT_EQ(task.spent().calls, 1);
}

TEST(Loop, AnswersCutOffTwiceInARowStopTheTaskWithAdvice) {
  // A server that always truncates: the loop would otherwise ask 3 times per request and again for
  // every restart (9 paid calls with the defaults).
  Harness h;
  h.options.answer_retries = 2;
  h.options.max_restarts = 2;
  for (int i = 0; i < 9; ++i) h.llm->add("synthesis", "PLAN: loop forever\n```cuda\n__global__ void k() {", FinishReason::length);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "truncated");
  EXPECT_FALSE(r->best);
  EXPECT_EQ(h.llm->requests.size(), 2u);
  bool advised = false;
  for (const auto& line : h.progress) advised = advised || line.find("raise llm.max_tokens") != std::string::npos;
  EXPECT_TRUE(advised) << "the advice is shown";

  // Resuming meets the same two cut-off answers in the log and stops at the same point, asking nothing.
  h.reset_llm();
  auto again = h.run(/*resume=*/true);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->stop_reason, "truncated");
  EXPECT_TRUE(h.llm->requests.empty());
}

TEST(Loop, ACompleteAnswerBetweenCutOffOnesKeepsTheTaskGoing) {
  Harness h;
  h.options.max_steps = 1;
  h.options.answer_retries = 2;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"), FinishReason::length);
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("unroll", "// TIME: 1.0\n", "// TIME: 0.9\n"), FinishReason::length);
  h.llm->add("optimize", optimize("unroll", "// TIME: 1.0\n", "// TIME: 0.9\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->stop_reason, "truncated");
  EXPECT_EQ(h.llm->remaining(), 0u);
}

TEST(Loop, AToolFailureIsAnErrorNotAVerdict) {
  Harness h;
  h.evaluator.fail_tool = true;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  auto r = h.run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("worker died"), std::string::npos);
}

TEST(Loop, ProfilesAreDelayedForGemmUntilTheStructuralPhaseEnds) {
  Harness h;
  h.evaluator.workload_class = "gemm";
  h.options.max_steps = 4;
  h.options.plateau_steps = 10;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("smem tiles", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  h.llm->add("optimize", optimize("cp.async", "// TIME: 0.5\n", "// TIME: 0.4\n"));
  h.llm->add("optimize", optimize("wgmma", "// TIME: 0.4\n", "// TIME: 0.3\n"));
  h.llm->add("optimize", optimize("swizzle", "// TIME: 0.3\n", "// TIME: 0.25\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.profiler.calls, 1);  // step 4 only
  EXPECT_EQ(h.request_text(3).find("profile:"), std::string::npos);
  EXPECT_NE(h.request_text(4).find("profile: memory-bound"), std::string::npos);
}

TEST(Loop, ElementwiseKernelsAreProfiledFromTheFirstStepOncePerBest) {
  Harness h;
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.profiler.calls, 2);  // the synthesized best, then step 1's best
  EXPECT_NE(h.request_text(1).find("profile: memory-bound"), std::string::npos);
}

TEST(Loop, ARolledBackStepDoesNotProfileTheUnchangedBestAgain) {
  Harness h;
  h.options.max_steps = 3;
  h.options.plateau_steps = 10;
  script_happy(*h.llm);  // step 2 is rolled back
  h.llm->add("optimize", optimize("wider tiles", "// TIME: 0.5\n", "// TIME: 0.9\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->history.size(), 3u);
  EXPECT_EQ(h.profiler.calls, 2);  // synthesis's best, step 1's best; step 3 reuses step 1's profile
  EXPECT_NE(h.request_text(3).find("profile: memory-bound"), std::string::npos);
}

TEST(Loop, APlateauBringsProfilingForwardAndNeverMeansNever) {
  {
    Harness h;
    h.evaluator.workload_class = "gemm";
    h.options.max_steps = 3;
    h.options.plateau_steps = 10;
    h.llm->add("synthesis", whole("// TIME: 1.0\n"));
    h.llm->add("optimize", optimize("a", "// TIME: 1.0\n", "// TIME: 1.5\n"));
    h.llm->add("optimize", optimize("b", "// TIME: 1.0\n", "// TIME: 1.5\n"));
    h.llm->add("optimize", optimize("c", "// TIME: 1.0\n", "// TIME: 1.5\n"));
    ASSERT_TRUE(h.run().ok());
    EXPECT_EQ(h.profiler.calls, 1);  // step 3, after two steps without improvement
    EXPECT_NE(h.request_text(3).find("profile:"), std::string::npos);
  }
  {
    Harness h;
    h.options.profile = *ProfilePolicy::parse("never");
    script_happy(*h.llm);
    ASSERT_TRUE(h.run().ok());
    EXPECT_EQ(h.profiler.calls, 0);
  }
}

TEST(Loop, AProfilerFailureIsToldToTheLlmAndTheRunGoesOn) {
  Harness h;
  h.profiler.fail = true;
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(h.request_text(1).find("no profile this step: ncu missing"), std::string::npos);
}

TEST(Loop, ANewRunRefusesADirectoryThatHoldsOne) {
  Harness h;
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  h.reset_llm();
  auto again = h.run();
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("--resume"), std::string::npos);
}

// Kill the run after every possible number of logged events (with and without a torn last line),
// resume with only the answers the log lacks, and require the very same outcome.
TEST(LoopResume, ResumingAfterACrashAtAnyEventGivesTheSameResult) {
  Harness full;
  full.options.repair_budget = 1;
  auto script = [](ScriptedLlm& llm) {
    llm.add("synthesis", whole("// VERDICT: compile_error rank\n"));
    llm.add("diagnose", kDiagnosis);
    llm.add("repair", edit("// VERDICT: compile_error rank\n", "// TIME: 1.0\n"));
    llm.add("optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.5\n"));
    llm.add("optimize", optimize("unroll", "// TIME: 0.5\n", "// TIME: 0.6\n"));
  };
  script(*full.llm);
  auto expected = full.run();
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto log = load_event_log(full.dir / "events.jsonl");
  ASSERT_TRUE(log.ok());
  const auto& events = log->events;
  ASSERT_GT(events.size(), 8u);

  for (size_t keep = 1; keep < events.size(); ++keep) {
    for (bool torn : {false, true}) {
      Harness h;
      h.options = full.options;
      std::string text;
      size_t llm_done = 0, evals_done = 0;
      for (size_t i = 0; i < keep; ++i) {
        text += events[i].dump() + "\n";
        llm_done += events[i]["type"] == "llm";
        evals_done += events[i]["type"] == "eval";
      }
      if (torn) text += "{\"type\":\"eval\",\"key\":\"abc";
      ASSERT_TRUE(write_file_atomic(h.dir / "events.jsonl", text).ok());
      // Only the answers the log does not hold are scripted: a replayed call must not reach the LLM.
      std::vector<std::pair<std::string, std::string>> turns = {
          {"synthesis", whole("// VERDICT: compile_error rank\n")},
          {"diagnose", kDiagnosis},
          {"repair", edit("// VERDICT: compile_error rank\n", "// TIME: 1.0\n")},
          {"optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.5\n")},
          {"optimize", optimize("unroll", "// TIME: 0.5\n", "// TIME: 0.6\n")}};
      for (size_t t = llm_done; t < turns.size(); ++t) h.llm->add(turns[t].first, turns[t].second);
      auto r = h.run(/*resume=*/true);
      ASSERT_TRUE(r.ok()) << "keep " << keep << ": " << r.error().message;
      EXPECT_EQ(r->stop_reason, expected->stop_reason) << keep;
      ASSERT_TRUE(r->best) << keep;
      EXPECT_EQ(r->best->source, expected->best->source) << keep;
      ASSERT_EQ(r->history.size(), expected->history.size()) << keep;
      for (size_t i = 0; i < r->history.size(); ++i) EXPECT_EQ(r->history[i].outcome, expected->history[i].outcome);
      EXPECT_EQ(h.llm->remaining(), 0u) << keep;
      EXPECT_EQ(h.evaluator.evaluations, full.evaluator.evaluations - static_cast<int>(evals_done)) << keep;
      EXPECT_EQ(h.evaluator.describes, events[0]["type"] == "problem" ? 0 : 1) << keep;
      // The resumed log is the complete log: same events in the same order.
      auto after = load_event_log(h.dir / "events.jsonl");
      ASSERT_TRUE(after.ok());
      ASSERT_EQ(after->events.size(), events.size()) << keep;
      for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(after->events[i]["key"], events[i]["key"]) << keep << " " << i;
    }
  }
}

TEST(LoopResume, AChangedProblemFileIsRefusedBeforeAnythingIsReplayed) {
  Harness h;
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  h.reset_llm();
  h.evaluator.problem_version = "-edited";
  auto r = h.run(/*resume=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot resume: event 1"), std::string::npos) << r.error().message;
  EXPECT_EQ(h.evaluator.evaluations, 3);  // only the first run's
}

TEST(LoopResume, ReplayedBestsAreNotExportedAgainOnlyTheLastOnce) {
  // Exporting copies the kernel's library out of the compile cache; a resumed run must not need the
  // libraries of every earlier best still to be there.
  Harness h;
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  ASSERT_EQ(h.bests.size(), 2u);
  h.reset_llm();
  h.bests.clear();
  auto r = h.run(/*resume=*/true);  // every event replayed
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(h.bests.size(), 1u);
  EXPECT_EQ(h.bests[0].source, r->best->source);
}

TEST(LoopResume, AnEventCutShortIsDroppedRedoneAndSaidSo) {
  Harness h;
  script_happy(*h.llm);
  auto first = h.run();
  ASSERT_TRUE(first.ok()) << first.error().message;
  // What a kill in the middle of an append leaves: half of one more line.
  std::string log = *read_file(h.dir / "events.jsonl");
  ASSERT_TRUE(write_file_atomic(h.dir / "events.jsonl", log + "{\"type\":\"ev").ok());
  h.reset_llm();
  h.progress.clear();
  auto r = h.run(/*resume=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->best->source, first->best->source);
  EXPECT_NE(std::find_if(h.progress.begin(), h.progress.end(),
                         [](const std::string& l) { return l.find("cut short") != std::string::npos; }),
            h.progress.end());
}

// `cutegen bench` interrupted while a task was starting: its run directory was claimed, but the run
// stopped before its first event (the log missing, or created and empty). Nothing was done that could
// be done twice, so --resume runs it from the beginning, exactly as a fresh run would.
TEST(LoopResume, ARunStoppedBeforeItsFirstEventStartsFromTheBeginning) {
  Harness fresh;
  script_happy(*fresh.llm);
  auto expected = fresh.run();
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto expected_log = load_event_log(fresh.dir / "events.jsonl");
  ASSERT_TRUE(expected_log.ok());

  for (bool file_exists : {false, true}) {
    Harness h;
    if (file_exists) {
      ASSERT_TRUE(write_file_atomic(h.dir / "events.jsonl", "").ok());
    }
    script_happy(*h.llm);
    auto r = h.run(/*resume=*/true);
    ASSERT_TRUE(r.ok()) << file_exists << ": " << r.error().message;
    EXPECT_EQ(r->stop_reason, expected->stop_reason);
    ASSERT_TRUE(r->best);
    EXPECT_EQ(r->best->source, expected->best->source);
    EXPECT_EQ(h.llm->remaining(), 0u);  // every call made for real: there was nothing to replay
    EXPECT_EQ(h.evaluator.evaluations, fresh.evaluator.evaluations);
    auto log = load_event_log(h.dir / "events.jsonl");
    ASSERT_TRUE(log.ok());
    EXPECT_EQ(log->events.size(), expected_log->events.size());
  }
}

TEST(LoopResume, OnlyALogWithoutEventsCountsAsNothingRecorded) {
  Harness h;
  {
    auto missing = Journal::open(h.dir / "missing" / "events.jsonl", /*resume=*/true);
    ASSERT_TRUE(missing.ok()) << missing.error().message;
    EXPECT_TRUE(missing->nothing_recorded());
    EXPECT_FALSE(missing->replaying());
    ASSERT_TRUE(write_file_atomic(h.dir / "empty" / "events.jsonl", "\n").ok());  // blank lines are no events
    auto empty = Journal::open(h.dir / "empty" / "events.jsonl", /*resume=*/true);
    ASSERT_TRUE(empty.ok()) << empty.error().message;
    EXPECT_TRUE(empty->nothing_recorded());
  }
  auto fresh = Journal::open(h.dir / "events.jsonl", /*resume=*/false);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_FALSE(fresh->nothing_recorded());  // a fresh run is not a resume
  // Killed in the middle of the first append: the torn line is dropped and redone (and said so by the
  // loop), which is not "nothing recorded".
  ASSERT_TRUE(write_file_atomic(h.dir / "events.jsonl", "{\"type\":\"problem\",\"ke").ok());
  auto torn = Journal::open(h.dir / "events.jsonl", /*resume=*/true);
  ASSERT_TRUE(torn.ok()) << torn.error().message;
  EXPECT_FALSE(torn->nothing_recorded());
  EXPECT_TRUE(torn->dropped_torn_tail());
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  h.reset_llm();
  auto resumed = Journal::open(h.dir / "events.jsonl", /*resume=*/true);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_FALSE(resumed->nothing_recorded());
  EXPECT_TRUE(resumed->replaying());
}

TEST(LoopResume, ALogWhoseOnlyEventWasCutShortStartsFromTheBeginningAndSaysSo) {
  Harness h;
  ASSERT_TRUE(write_file_atomic(h.dir / "events.jsonl", "{\"type\":\"problem\",\"key\":\"descr").ok());
  script_happy(*h.llm);
  auto r = h.run(/*resume=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "steps");
  EXPECT_EQ(h.llm->remaining(), 0u);
  EXPECT_NE(std::find_if(h.progress.begin(), h.progress.end(),
                         [](const std::string& l) { return l.find("cut short") != std::string::npos; }),
            h.progress.end());
  // The torn bytes are gone: every line of the log is a whole event.
  auto log = load_event_log(h.dir / "events.jsonl");
  ASSERT_TRUE(log.ok());
  EXPECT_FALSE(log->dropped_torn_tail);
  EXPECT_EQ(log->events.front().value("type", ""), "problem");
}

TEST(LoopResume, ADecisionThatComesOutDifferentlyIsRefused) {
  Harness h;
  h.options.max_steps = 1;
  script_happy(*h.llm);
  auto first = h.run();
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_EQ(first->history.at(0).outcome, StepOutcome::accepted);
  h.reset_llm();
  h.options.min_gain = 0.9;  // step 1's 2x no longer counts: the same answers, another decision
  auto r = h.run(/*resume=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is decision step1 accepted, but this run now produces decision step1 slower"),
            std::string::npos)
      << r.error().message;
}

TEST(LoopResume, ALogFromAnotherConfigurationIsRefusedWithThePosition) {
  Harness h;
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  // Same directory, a different first prompt: the logged synthesis answer belongs to another request.
  class OtherPrompter : public FakePrompter {
    Result<std::string> synthesis(const ProblemInfo& p) override { return "synthesis of something else " + p.name(); }
  } other;
  auto journal = Journal::open(h.dir / "events.jsonl", true);
  ASSERT_TRUE(journal.ok());
  RunFiles files(h.dir);
  h.reset_llm();
  Loop loop(*h.client, h.evaluator, other, nullptr, *journal, files, h.options);
  auto r = loop.run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot resume: event 3"), std::string::npos) << r.error().message;
}

TEST(LoopResume, ABestLibraryThatLeftTheCacheIsRebuiltFromTheLoggedSource) {
  Harness h;
  h.evaluator.library_dir = h.dir / "cache";
  script_happy(*h.llm);
  auto first = h.run();
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(fs::exists(first->best->evaluation.library));
  fs::remove_all(h.dir / "cache");  // `cutegen cache --clear` while the run was stopped
  h.reset_llm();
  h.bests.clear();
  h.progress.clear();
  auto r = h.run(/*resume=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.evaluator.rebuilds, 1);
  ASSERT_EQ(h.bests.size(), 1u);
  ASSERT_TRUE(fs::exists(h.bests[0].evaluation.library));
  EXPECT_NE(read_file(h.bests[0].evaluation.library)->find("// TIME: 0.5"), std::string::npos);
  auto said = [&](const std::string& part) {
    return std::any_of(h.progress.begin(), h.progress.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(said("rebuilt it from the logged source"));
  EXPECT_FALSE(said("another toolchain"));
}

TEST(LoopResume, ABestLibraryRebuiltWithAnotherToolchainSaysSo) {
  Harness h;
  h.evaluator.library_dir = h.dir / "cache";
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  fs::remove_all(h.dir / "cache");
  h.reset_llm();
  h.evaluator.toolchain = "nvcc 14.0";
  auto r = h.run(/*resume=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(std::any_of(h.progress.begin(), h.progress.end(),
                          [](const std::string& l) { return l.find("another toolchain") != std::string::npos; }));
}

TEST(LoopResume, ABestLibraryThatCannotBeRebuiltIsAOneLineError) {
  Harness h;
  h.evaluator.library_dir = h.dir / "cache";
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  fs::remove_all(h.dir / "cache");
  h.reset_llm();
  h.evaluator.fail_rebuild = true;
  auto r = h.run(/*resume=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot be rebuilt from its logged source: nvcc not found"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

TEST(Loop, AProfileOfABestWhoseLibraryLeftTheCacheRebuildsItFirst) {
  Harness h;
  h.evaluator.library_dir = h.dir / "cache";
  h.options.max_steps = 1;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  // Between the synthesis and the first step's profile, another process prunes the cache.
  h.after_best = [&] { fs::remove_all(h.dir / "cache"); };
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.profiler.calls, 1);
  EXPECT_TRUE(h.profiler.library_existed);
  EXPECT_EQ(h.evaluator.rebuilds, 1);
}

// Hand-edited or damaged logs: every way a middle event can be wrong stops the resume with one line
// naming that line of the file, never an exception out of the JSON library.
TEST(LoopResume, AMalformedEventInTheMiddleIsAOneLineErrorNamingItsLine) {
  Harness full;
  script_happy(*full.llm);
  ASSERT_TRUE(full.run().ok());
  auto log = load_event_log(full.dir / "events.jsonl");
  ASSERT_TRUE(log.ok());
  auto first_of = [&](const std::string& type) {
    for (size_t i = 0; i < log->events.size(); ++i)
      if (log->events[i]["type"] == type) return i;
    ADD_FAILURE() << "no " << type << " event";
    return size_t{0};
  };
  struct Damage {
    std::string type;
    std::function<void(nlohmann::json&)> apply;
    std::string says;
  };
  std::vector<Damage> damages = {
      {"eval", [](nlohmann::json& e) { e["evaluation"] = "oops"; }, "\"evaluation\" is string where an object"},
      {"eval", [](nlohmann::json& e) { e["evaluation"]["verdict"] = 7; }, "\"verdict\" is number where a string"},
      {"eval", [](nlohmann::json& e) { e["evaluation"]["time"] = "fast"; }, "\"time\" is string where an object"},
      {"eval", [](nlohmann::json& e) { e.erase("evaluation"); }, "its \"evaluation\" is missing"},
      {"problem", [](nlohmann::json& e) { e["problem"]["facts"].erase("name"); },
       "recorded problem description is malformed: the problem's \"name\" is missing"},
      {"llm", [](nlohmann::json& e) { e["cost_usd"] = "free"; }, "its \"cost_usd\" is string where a number was expected"},
      {"llm", [](nlohmann::json& e) { e["response"]["finish"] = 3; }, "response.finish must be a string"},
      {"eval", [](nlohmann::json& e) { e["key"] = 7; }, "its \"key\" is not a string"},
      {"llm", [](nlohmann::json& e) { e["type"] = nullptr; }, "no string \"type\""},
  };
  for (const auto& d : damages) {
    Harness h;
    size_t at = first_of(d.type);
    std::string text;
    for (size_t i = 0; i < log->events.size(); ++i) {
      nlohmann::json e = log->events[i];
      if (i == at) d.apply(e);
      text += e.dump() + "\n";
    }
    ASSERT_TRUE(write_file_atomic(h.dir / "events.jsonl", text).ok());
    script_happy(*h.llm);
    auto r = h.run(/*resume=*/true);
    ASSERT_FALSE(r.ok()) << d.says;
    const std::string& m = r.error().message;
    EXPECT_NE(m.find(fmt::format("events.jsonl:{}: ", at + 1)), std::string::npos) << m;
    EXPECT_NE(m.find(d.says), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(r.error().kind, ErrorKind::cannot_resume) << m;
  }
}

// ---- a way to decline, a failed idea that was undone, what the run records -------------------------

std::string decline(const std::string& reason) { return "The kernel is done.\n\nNO_FURTHER_CHANGE: " + reason + "\n"; }

TEST(LoopDecline, NoFurtherChangeEndsTheOptimisationWithoutAnEvaluation) {
  Harness h;
  h.options.max_steps = 5;
  h.options.profile = *ProfilePolicy::parse("never");
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.55\n"));
  h.llm->add("optimize", decline("at 91% of the floor; what is left is launch latency"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "declined");
  EXPECT_EQ(r->stop_detail, "at 91% of the floor; what is left is launch latency");
  EXPECT_EQ(h.evaluator.evaluations, 2) << "the synthesis and step 1; the decline costs none";
  ASSERT_EQ(r->history.size(), 2u);
  EXPECT_EQ(r->history[1].outcome, StepOutcome::declined);
  EXPECT_EQ(r->history[1].note, "at 91% of the floor; what is left is launch latency");
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 0.55);
  EXPECT_EQ(h.llm->remaining(), 0u);
  // The run log says why it stopped.
  auto log = load_event_log(h.dir / "events.jsonl");
  ASSERT_TRUE(log.ok());
  const auto& stop = log->events.back();
  EXPECT_EQ(stop["key"], "stop");
  EXPECT_EQ(stop["reason"], "declined");
  EXPECT_EQ(stop["detail"], "at 91% of the floor; what is left is launch latency");

  // A replayed run meets the same decline in its log and stops there: no LLM call, no evaluation.
  h.reset_llm();
  const int evaluations = h.evaluator.evaluations;
  auto again = h.run(/*resume=*/true);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->stop_reason, "declined");
  EXPECT_TRUE(h.llm->requests.empty());
  EXPECT_EQ(h.evaluator.evaluations, evaluations);
}

TEST(LoopDecline, ADeclineBeforeAnyProfileHandsOverToAProfileFirst) {
  // A GEMM's profiles are withheld until step 4: a decline at step 1 gets the profile at step 2, and
  // only a second decline, with that evidence seen, ends the optimisation.
  Harness h;
  h.evaluator.workload_class = "gemm";
  h.options.max_steps = 6;
  h.options.plateau_steps = 1;  // a decline is no step without improvement: the plateau does not fire
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", decline("the tiling looks right"));
  h.llm->add("optimize", decline("the profile shows 91% of DRAM bandwidth"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "declined");
  EXPECT_EQ(r->stop_detail, "the profile shows 91% of DRAM bandwidth");
  EXPECT_EQ(h.evaluator.evaluations, 1);
  EXPECT_EQ(h.profiler.calls, 1);
  EXPECT_EQ(h.request_text(1).find("profile:"), std::string::npos);
  std::string second = h.request_text(2);
  EXPECT_NE(second.find("profile: memory-bound"), std::string::npos) << second;
  EXPECT_NE(second.find("history: 1  declined"), std::string::npos) << second;
  ASSERT_EQ(r->history.size(), 2u);
}

TEST(LoopDecline, WithProfilesShownADeclineEndsAtOnce) {
  Harness h;  // elementwise: profiled from step 1
  h.options.max_steps = 4;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", decline("memory-bound at 91%"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "declined");
  EXPECT_EQ(r->history.size(), 1u);
  EXPECT_EQ(h.llm->remaining(), 0u);
}

TEST(LoopDecline, ADeclineWithEditsIsSentBackAsUnusable) {
  Harness h;
  h.options.max_steps = 1;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", decline("done") + edit("// TIME: 1.0\n", "// TIME: 0.5\n"));
  h.llm->add("optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(h.llm->requests[2].messages.back().text.find("Send one of the two"), std::string::npos);
  EXPECT_EQ(r->history.at(0).outcome, StepOutcome::accepted);
}

TEST(LoopUndone, ARepairThatOnlyUndoesTheChangeIsAFailedIdeaAndNotEvaluatedAgain) {
  Harness h;
  h.options.max_steps = 2;
  h.options.plateau_steps = 10;
  h.llm->add("synthesis", whole("// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("split rows over 4 blocks", "// TIME: 1.0\n", "// VERDICT: mismatch trial 2 failed\n"));
  h.llm->add("diagnose", kDiagnosis);
  // The "repair" puts the old line back: the kernel is the best again.
  h.llm->add("repair", edit("// VERDICT: mismatch trial 2 failed\n", "// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("unroll", "// TIME: 1.0\n", "// TIME: 0.9\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.evaluator.evaluations, 3) << "synthesis, step 1's broken kernel, step 2; never the undone kernel";
  ASSERT_EQ(r->history.size(), 2u);
  const StepRecord& undone = r->history[0];
  EXPECT_EQ(undone.outcome, StepOutcome::undone);
  EXPECT_EQ(undone.verdict, Verdict::mismatch);
  EXPECT_EQ(undone.idea, "split rows over 4 blocks");
  EXPECT_EQ(undone.evidence, "evidence for mismatch");
  EXPECT_FALSE(undone.time_ms);
  // The next prompt carries the failed idea with its evidence.
  std::string next = h.request_text(4);
  EXPECT_NE(next.find("history: 1 split rows over 4 blocks undone mismatch evidence: evidence for mismatch"),
            std::string::npos)
      << next;
}

TEST(LoopRecord, TheExampleKernelShownIsRecorded) {
  Harness h;
  script_happy(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->example_shown, "library/elementwise.cu");
  EXPECT_EQ(r->problem.name(), "relu");
  auto log = load_event_log(h.dir / "events.jsonl");
  ASSERT_TRUE(log.ok());
  ASSERT_GE(log->events.size(), 2u);
  EXPECT_EQ(log->events[1]["key"], "example");
  EXPECT_EQ(log->events[1]["file"], "library/elementwise.cu");
  for (const auto& e : log->events) EXPECT_EQ(e["v"], Journal::kFormat) << e.dump();
}

TEST(LoopResume, ALogOfAnotherFormatIsRefusedWithAClearMessage) {
  Harness h;
  script_happy(*h.llm);
  ASSERT_TRUE(h.run().ok());
  // What an older cutegen wrote: the same events without the format stamp.
  auto log = load_event_log(h.dir / "events.jsonl");
  ASSERT_TRUE(log.ok());
  std::string text;
  for (auto e : log->events) {
    e.erase("v");
    text += e.dump() + "\n";
  }
  ASSERT_TRUE(write_file_atomic(h.dir / "events.jsonl", text).ok());
  h.reset_llm();
  auto r = h.run(/*resume=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::cannot_resume);
  EXPECT_NE(r.error().message.find("events.jsonl:1 was written by another cutegen (run log format 1; this one reads "
                                   "formats 2 to 3)"),
            std::string::npos)
      << r.error().message;
  EXPECT_TRUE(h.llm->requests.empty());
}

// --- tuning (--tune auto) ----------------------------------------------------------------------

namespace {
const std::string kKnob = "// cutegen:knob K in {1, 2, 3}\n#ifndef K\n#define K 1\n#endif\n";
}

TEST(Loop, TuneAutoTunesTheFirstKernelAndEachAcceptedStepAndTheNextPromptSaysWhatItChose) {
  Harness h;
  FakeTuner tuner;
  tuner.fast = {2};
  h.options.tuner = &tuner;
  h.options.max_steps = 2;
  h.llm->add("synthesis", whole(kKnob + "// TIME: 1.0\n"));
  // Step 1 edits the tuned kernel (K = 2 baked in) and is accepted; step 2 is slower.
  h.llm->add("optimize", optimize("unroll more", "// TIME: 1.0\n", "// TIME: 0.3\n"));
  h.llm->add("optimize", optimize("smaller blocks", "// TIME: 0.3\n", "// TIME: 0.8\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Tuned twice: after synthesis (K=2 beats the default and becomes the best) and after step 1
  // (K=2 is now the default, and stays); not after the rolled-back step 2.
  EXPECT_EQ(tuner.compiles, 6);
  EXPECT_EQ(tuner.verifies, 1);  // only the winner, once; the loop holds the defaults' evaluations
  ASSERT_EQ(r->history.size(), 4u);
  EXPECT_EQ(r->history[0].kind, StepKind::tuning);
  EXPECT_EQ(r->history[0].n, 0);
  EXPECT_EQ(r->history[0].outcome, StepOutcome::accepted);
  EXPECT_DOUBLE_EQ(*r->history[0].time_ms, 0.5);
  EXPECT_NE(r->history[0].note.find("chose K=2 over the default (K=1)"), std::string::npos) << r->history[0].note;
  EXPECT_EQ(r->history[1].kind, StepKind::optimization);
  EXPECT_EQ(r->history[2].kind, StepKind::tuning);
  EXPECT_EQ(r->history[2].n, 1);
  EXPECT_EQ(r->history[2].outcome, StepOutcome::slower);
  EXPECT_EQ(r->history[3].outcome, StepOutcome::slower);
  ASSERT_TRUE(r->best);
  EXPECT_NE(r->best->source.find("#define K 2\n"), std::string::npos);
  EXPECT_NE(r->best->source.find("// TIME: 0.3"), std::string::npos);
  // Step 1's prompt starts from the tuned kernel and says what tuning chose.
  std::string first_step = h.request_text(1);
  EXPECT_NE(first_step.find("#define K 2\n"), std::string::npos) << first_step;
  EXPECT_NE(first_step.find("history: 0 tuned the knobs (3 variants) accepted"), std::string::npos) << first_step;
  EXPECT_TRUE(fs::exists(h.dir / "steps/003-eval-tune0/tune.md"));
  EXPECT_TRUE(fs::exists(h.dir / "steps/003-eval-tune0/eval.json"));

  // Resume replays both tunings from the log: nothing is compiled or timed again, same result.
  const int compiles = tuner.compiles, screens = tuner.screens;
  h.reset_llm();
  auto again = h.run(/*resume=*/true);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(tuner.compiles, compiles);
  EXPECT_EQ(tuner.screens, screens);
  EXPECT_EQ(again->best->source, r->best->source);
  EXPECT_EQ(again->history.size(), 4u);
}

TEST(Loop, TuneNeverAndKernelsWithoutKnobsAreNotTuned) {
  Harness h;
  h.options.max_steps = 1;
  h.llm->add("synthesis", whole(kKnob + "// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("unroll", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  auto r = h.run();  // options.tuner stays nullptr: --tune never
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->history.size(), 1u);
  EXPECT_EQ(r->history[0].kind, StepKind::optimization);

  Harness h2;
  FakeTuner tuner;
  h2.options.tuner = &tuner;
  h2.options.max_steps = 1;
  script_happy(*h2.llm);  // no knobs in these kernels
  auto r2 = h2.run();
  ASSERT_TRUE(r2.ok()) << r2.error().message;
  EXPECT_EQ(tuner.compiles, 0);
  for (const auto& s : r2->history) EXPECT_NE(s.kind, StepKind::tuning);
}

TEST(Loop, KnobsDeclaredWronglyAreAStepTheNextPromptExplains) {
  Harness h;
  FakeTuner tuner;
  h.options.tuner = &tuner;
  h.options.max_steps = 1;
  h.llm->add("synthesis", whole("// cutegen:knob K in {1, 2}\n#ifndef K\n#define K 4\n#endif\n// TIME: 1.0\n"));
  h.llm->add("optimize", optimize("unroll", "// TIME: 1.0\n", "// TIME: 0.99\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GE(r->history.size(), 1u);
  EXPECT_EQ(r->history[0].kind, StepKind::tuning);
  EXPECT_EQ(r->history[0].outcome, StepOutcome::unusable);
  EXPECT_NE(r->history[0].note.find("the default 4 is not among its values"), std::string::npos) << r->history[0].note;
  EXPECT_EQ(tuner.compiles, 0);
  EXPECT_NE(h.request_text(1).find("history: 0 tuning the knobs unusable"), std::string::npos) << h.request_text(1);
}
