// --candidates N > 1: N requests per step at once, each for its own menu item; the usable kernels
// compiled at once and screened; the fastest judged in full; every candidate recorded; the journal
// in candidate order, so a resume replays the same run; budgets held before every call.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "agent/loop.h"
#include "agent/testdata/loop_fakes.h"
#include "common/fs.h"
#include "common/testdata/test_helpers.h"
#include "report/run_page.h"
#include "report/run_report.h"
#include "report/run_view.h"
#include "runlog/run_log.h"

using namespace cutegen;
using namespace cutegen::testing;
namespace fs = std::filesystem;

// Named, not anonymous: the unity build shares one translation unit with the other loop tests.
namespace loop_candidates_test {

std::string cand_kernel(const std::string& markers) {
  return "#include <cutegen/kernel.h>\n" + markers +
         "extern \"C\" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out,\n"
         "                                 int32_t n_out, cudaStream_t stream) {\n  return 0;\n}\n";
}
std::string cand_edit(const std::string& from, const std::string& to, const std::string& notes = "") {
  return notes + "```\n<<<<<<< SEARCH\n" + from + "=======\n" + to + ">>>>>>> REPLACE\n```\n";
}
std::string cand_optimize(const std::string& idea, const std::string& from, const std::string& to) {
  return cand_edit(from, to, "OPTIMIZATION: " + idea + "\nEXPECTED: faster\n\n");
}
const std::string kSynthesis = "PLAN: plain\n```cuda\n" + cand_kernel("// TIME: 1.0\n") + "```\n";

struct CandidatesHarness {
  TempDir dir;
  ScriptedLlm* llm = nullptr;  // owned by client
  std::unique_ptr<LlmClient> client;
  MarkerEvaluator evaluator;
  FakePrompter prompter;
  LoopOptions options{.max_steps = 1, .candidates = 3, .repair_budget = 1};
  BudgetLimits budget;

  CandidatesHarness() { reset_llm(); }
  void reset_llm() {
    auto backend = std::make_unique<ScriptedLlm>();
    llm = backend.get();
    auto c = LlmClient::create(std::move(backend), PriceTable{}, LlmClientOptions{.budget = budget});
    EXPECT_TRUE(c.ok());
    client = std::move(*c);
  }
  Result<LoopResult> run(bool resume = false) {
    auto journal = Journal::open(dir.path / "events.jsonl", resume);
    if (!journal) return journal.error();
    RunFiles files(dir.path);
    Loop loop(*client, evaluator, prompter, nullptr, *journal, files, options);
    return loop.run();
  }
  std::string request(std::size_t i) const { return llm->requests.at(i).messages.back().text; }
};

// Step 1's three answers: candidate 1 correct in 0.7 ms, candidate 2 in 0.5 ms, candidate 3 does not
// compile. Each goes to the request that names its candidate (they are asked in no fixed order).
const std::vector<std::pair<std::string, std::string>> kStep1 = {
    {"candidate 1 of 3", cand_optimize("fuse the passes", "// TIME: 1.0\n", "// TIME: 0.7\n")},
    {"candidate 2 of 3", cand_optimize("16-byte vectors", "// TIME: 1.0\n", "// TIME: 0.5\n")},
    {"candidate 3 of 3", cand_optimize("more unrolling", "// TIME: 1.0\n", "// VERDICT: compile_error bad layout\n")},
};

void script_step1(ScriptedLlm& llm, std::size_t from = 0) {
  if (from == 0) llm.add("synthesis", kSynthesis);
  for (std::size_t i = from == 0 ? 0 : from - 1; i < kStep1.size(); ++i)
    llm.add_for(kStep1[i].first, "optimize", kStep1[i].second);
}

}  // namespace loop_candidates_test

using namespace loop_candidates_test;

TEST(LoopCandidates, ThreeCallsAtOnceCompiledTogetherTheFastestJudgedTheLosersRecorded) {
  CandidatesHarness h;
  h.llm->rendezvous = 3;
  h.evaluator.compile_rendezvous = 3;
  script_step1(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;

  // Three LLM calls for the step, made at once, each for its own menu item and told the others'.
  ASSERT_EQ(h.llm->requests.size(), 4u);
  EXPECT_EQ(h.llm->max_in_flight, 3);
  EXPECT_EQ(h.llm->remaining(), 0u);
  std::vector<std::string> asked;
  for (std::size_t i = 1; i < 4; ++i) asked.push_back(h.request(i));
  std::sort(asked.begin(), asked.end());
  EXPECT_NE(asked[0].find("candidate 1 of 3: 1. fuse; siblings: [2. vectorize] [3. unroll]"), std::string::npos)
      << asked[0];
  EXPECT_NE(asked[1].find("candidate 2 of 3: 2. vectorize; siblings: [1. fuse] [3. unroll]"), std::string::npos);
  EXPECT_NE(asked[2].find("candidate 3 of 3: 3. unroll; siblings: [1. fuse] [2. vectorize]"), std::string::npos);
  for (const auto& a : asked) EXPECT_EQ(a.rfind("optimize step 1", 0), 0u) << a;  // the optimize prompt, then the share

  // Compiled at once; the two that compiled screened; only the fastest judged in full.
  EXPECT_EQ(h.evaluator.compiles, 3);
  EXPECT_EQ(h.evaluator.max_compiles_in_flight, 3);
  EXPECT_EQ(h.evaluator.screens, 2);
  EXPECT_EQ(h.evaluator.screen_batches, std::vector<std::size_t>{2});  // together, in one screening session
  EXPECT_EQ(h.evaluator.evaluations, 2);  // the synthesis and candidate 2
  ASSERT_TRUE(r->best);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 0.5);

  // The step is candidate 2's, and every candidate is in its record.
  ASSERT_EQ(r->history.size(), 1u);
  const StepRecord& step = r->history[0];
  EXPECT_EQ(step.outcome, StepOutcome::accepted);
  EXPECT_EQ(step.idea, "16-byte vectors");
  ASSERT_EQ(step.candidates.size(), 3u);
  EXPECT_EQ(step.candidates[0].outcome, CandidateOutcome::lost);
  EXPECT_EQ(step.candidates[0].screened_ms, 0.7);
  EXPECT_EQ(step.candidates[0].note, "slower in screening than candidate 2");
  EXPECT_EQ(step.candidates[1].outcome, CandidateOutcome::chosen);
  EXPECT_EQ(step.candidates[1].item, "2. vectorize");
  EXPECT_EQ(step.candidates[2].outcome, CandidateOutcome::failed);
  EXPECT_EQ(step.candidates[2].verdict, Verdict::compile_error);
  EXPECT_EQ(step.candidates[2].note, "bad layout");
  EXPECT_EQ(step.candidates[2].idea, "more unrolling");

  // The log: the answers and compiles in candidate order, the screens, then the winner's evaluation.
  auto log = read_run_log(h.dir.path / "events.jsonl");
  ASSERT_TRUE(log.ok()) << log.error().message;
  std::vector<std::string> kinds;
  for (const auto& e : log->events) kinds.push_back(describe(e.event).substr(0, describe(e.event).find(' ')));
  const std::vector<std::string> expected = {"problem", "decision", "llm",     "eval",    "decision", "llm",
                                             "llm",     "llm",      "compile", "compile", "compile",  "screen",
                                             "screen",  "eval",     "decision", "decision"};
  EXPECT_EQ(kinds, expected);
  std::vector<int> llm_candidates;
  for (const auto& e : log->events)
    if (const auto* l = std::get_if<LlmEvent>(&e.event)) llm_candidates.push_back(l->candidate);
  EXPECT_EQ(llm_candidates, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(fs::exists(h.dir.path / "steps/004-optimize-c2/answer.md"));
  EXPECT_TRUE(fs::exists(h.dir.path / "steps/008-cand-step1-c3/compile.json"));
  EXPECT_TRUE(fs::exists(h.dir.path / "steps/007-cand-step1-c2/screen.json"));

  // The run view, report.md and the page show every candidate.
  auto view = load_run_view(h.dir.path);
  ASSERT_TRUE(view.ok()) << view.error().message;
  ASSERT_EQ(view->steps.size(), 1u);
  EXPECT_EQ(view->steps[0].record.candidates.size(), 3u);
  ASSERT_TRUE(view->best_attempt);
  EXPECT_EQ(view->attempt(*view->best_attempt)->label, "step1-c2");
  const std::string md = render_run_report(view->summary);
  EXPECT_NE(md.find("candidate 3 (3. unroll): failed"), std::string::npos) << md;
  EXPECT_NE(md.find("candidate 1 (1. fuse): lost"), std::string::npos) << md;
  const std::string page = render_run_page(*view);
  EXPECT_NE(page.find("more unrolling"), std::string::npos);
  EXPECT_NE(page.find("slower in screening than candidate 2"), std::string::npos);
}

// When the fastest candidate screens no faster than the best, no full evaluation can keep it: the step
// ends slower without one, its screened times ranks only (no time of the step's own).
TEST(LoopCandidates, WhenTheFastestScreensNoFasterThanTheBestNoneIsJudgedInFull) {
  CandidatesHarness h;
  h.llm->add("synthesis", kSynthesis);
  h.llm->add_for("candidate 1 of 3", "optimize", cand_optimize("fuse the passes", "// TIME: 1.0\n", "// TIME: 1.3\n"));
  h.llm->add_for("candidate 2 of 3", "optimize", cand_optimize("16-byte vectors", "// TIME: 1.0\n", "// TIME: 1.0\n// v2\n"));
  h.llm->add_for("candidate 3 of 3", "optimize",
                 cand_optimize("more unrolling", "// TIME: 1.0\n", "// VERDICT: compile_error bad layout\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.evaluator.screens, 2);
  EXPECT_EQ(h.evaluator.evaluations, 1);  // the synthesis alone
  ASSERT_TRUE(r->best);
  EXPECT_DOUBLE_EQ(r->best->evaluation.median_ms(), 1.0);
  ASSERT_EQ(r->history.size(), 1u);
  const StepRecord& step = r->history[0];
  EXPECT_EQ(step.outcome, StepOutcome::slower);
  EXPECT_EQ(step.idea, "16-byte vectors");
  EXPECT_FALSE(step.time_ms) << "a screened time is a rank, not the step's result";
  EXPECT_NE(step.note.find("screened at 1 ms, no faster than the best's 1 ms: not judged in full"), std::string::npos)
      << step.note;
  EXPECT_EQ(step.candidates[1].outcome, CandidateOutcome::chosen);
  EXPECT_EQ(step.candidates[1].note, "no faster than the best in screening: not judged in full");
  EXPECT_EQ(step.candidates[0].outcome, CandidateOutcome::lost);
  // A resume replays it from the log's screens, again without an evaluation.
  h.reset_llm();
  auto again = h.run(/*resume=*/true);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(h.evaluator.evaluations, 1);
  EXPECT_EQ(again->history.size(), 1u);
  EXPECT_EQ(again->history[0].note, step.note);
  // The run view and report.md read the step like any other rolled-back one.
  auto view = load_run_view(h.dir.path);
  ASSERT_TRUE(view.ok()) << view.error().message;
  ASSERT_EQ(view->steps.size(), 1u);
  EXPECT_NE(render_run_report(view->summary).find("not judged in full"), std::string::npos);
}

TEST(LoopCandidates, OneCandidateIsTodaysLoopWithNoCompileOrScreenOfItsOwn) {
  CandidatesHarness h;
  h.options.candidates = 1;
  h.llm->add("synthesis", kSynthesis);
  h.llm->add("optimize", cand_optimize("16-byte vectors", "// TIME: 1.0\n", "// TIME: 0.5\n"));
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.llm->requests.size(), 2u);
  EXPECT_EQ(h.request(1).find("candidate"), std::string::npos) << h.request(1);
  EXPECT_EQ(h.evaluator.compiles, 0);
  EXPECT_EQ(h.evaluator.screens, 0);
  ASSERT_EQ(r->history.size(), 1u);
  EXPECT_TRUE(r->history[0].candidates.empty());
  EXPECT_FALSE(r->history[0].to_json().contains("candidates"));
  EXPECT_TRUE(fs::exists(h.dir.path / "steps/004-eval-step1/kernel.cu"));
}

TEST(LoopCandidates, AResumeFromAnyPointReplaysTheSameStep) {
  CandidatesHarness full;
  script_step1(*full.llm);
  auto expected = full.run();
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  std::vector<std::string> lines;
  std::string text = *read_file(full.dir.path / "events.jsonl");
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  for (std::size_t keep = 1; keep < lines.size(); ++keep) {
    CandidatesHarness h;
    std::string kept;
    std::size_t answered = 0, compiled = 0, screened = 0;
    for (std::size_t i = 0; i < keep; ++i) {
      kept += lines[i] + "\n";
      answered += lines[i].find("\"type\":\"llm\"") != std::string::npos;
      compiled += lines[i].find("\"type\":\"compile\"") != std::string::npos;
      screened += lines[i].find("\"type\":\"screen\"") != std::string::npos;
    }
    ASSERT_TRUE(write_file_atomic(h.dir.path / "events.jsonl", kept).ok());
    script_step1(*h.llm, answered);  // only the answers the log lacks
    auto r = h.run(/*resume=*/true);
    ASSERT_TRUE(r.ok()) << "keep " << keep << ": " << r.error().message;
    EXPECT_EQ(h.llm->remaining(), 0u) << keep;
    EXPECT_EQ(h.evaluator.compiles, 3 - static_cast<int>(compiled)) << keep;
    EXPECT_EQ(h.evaluator.screens, 2 - static_cast<int>(screened)) << keep;
    ASSERT_TRUE(r->best);
    EXPECT_EQ(r->best->source, expected->best->source) << keep;
    ASSERT_EQ(r->history.size(), 1u);
    EXPECT_EQ(r->history[0].to_json(), expected->history[0].to_json()) << keep;
    // The resumed log is the same log.
    auto after = read_run_log(h.dir.path / "events.jsonl");
    ASSERT_TRUE(after.ok());
    ASSERT_EQ(after->events.size(), lines.size()) << keep;
    for (std::size_t i = 0; i < lines.size(); ++i)
      EXPECT_EQ(describe(after->events[i].event), describe(read_run_log(full.dir.path / "events.jsonl")->events[i].event))
          << keep << " " << i;
  }
}

TEST(LoopCandidates, TheBudgetIsHeldBeforeEveryCallOfTheBatch) {
  CandidatesHarness h;
  h.budget.max_calls = 3;  // the synthesis and two of the three candidates
  h.reset_llm();
  script_step1(*h.llm);
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop_reason, "budget");
  EXPECT_EQ(h.llm->requests.size(), 3u);  // the third candidate's call never reached the LLM
  EXPECT_TRUE(r->history.empty());        // the step was not decided
  EXPECT_EQ(h.evaluator.compiles, 0);
}

TEST(LoopCandidates, WhenNoneCompilesTheFirstGetsTheRepairRoundsWithItsOwnFailure) {
  CandidatesHarness h;
  h.llm->add("synthesis", kSynthesis);
  h.llm->add_for("candidate 1 of 2", "optimize", cand_optimize("fuse", "// TIME: 1.0\n", "// VERDICT: compile_error rank 3\n"));
  h.llm->add_for("candidate 2 of 2", "optimize", cand_optimize("vectors", "// TIME: 1.0\n", "// VERDICT: rejected raw pointer\n"));
  h.llm->add("diagnose", "DIAGNOSIS: the layout rank is wrong\nFIX: use rank 2\n");
  h.llm->add("repair", cand_edit("// VERDICT: compile_error rank 3\n", "// TIME: 0.6\n"));
  h.options.candidates = 2;
  auto r = h.run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.llm->remaining(), 0u);
  // The diagnosis starts from candidate 1's compile failure: its kernel is not judged again.
  EXPECT_NE(h.request(3).find("diagnose compile_error"), std::string::npos) << h.request(3);
  EXPECT_EQ(h.evaluator.screens, 0);
  EXPECT_EQ(h.evaluator.evaluations, 2);  // the synthesis and the repaired kernel
  ASSERT_EQ(r->history.size(), 1u);
  EXPECT_EQ(r->history[0].outcome, StepOutcome::accepted);
  EXPECT_EQ(r->history[0].candidates[0].outcome, CandidateOutcome::chosen);
  EXPECT_EQ(r->history[0].candidates[0].note, "repaired after: rank 3");
  EXPECT_EQ(r->history[0].candidates[1].outcome, CandidateOutcome::failed);
  EXPECT_EQ(r->history[0].candidates[1].verdict, Verdict::rejected);
  auto view = load_run_view(h.dir.path);
  ASSERT_TRUE(view.ok()) << view.error().message;
  EXPECT_EQ(view->attempt(*view->best_attempt)->label, "step1-c1-repair1");
}
