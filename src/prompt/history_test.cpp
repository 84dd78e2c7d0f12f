#include "prompt/history.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {
using cutegen::testing::contains;


StepRecord step(int n, StepOutcome o, std::optional<double> ms = std::nullopt, std::string idea = "idea") {
  StepRecord s;
  s.n = n;
  s.idea = std::move(idea);
  s.outcome = o;
  s.time_ms = ms;
  return s;
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')) + (s.empty() ? 0 : 1); }

}  // namespace

TEST(PromptHistory, OneLinePerStepWithOutcomeTimeAndSpeedupEachOnce) {
  StepRecord s = step(7, StepOutcome::accepted, 0.41234, "3xTF32 tensor-core MMA\n(16x8x8 atoms)");
  s.speedup = 1.314;
  EXPECT_EQ(format_step(s, {}, true),
            "step 7: 3xTF32 tensor-core MMA (16x8x8 atoms) -> improved, kept: 0.4123 ms; 1.31x the best before [best]");
  StepRecord bad = step(8, StepOutcome::incorrect, std::nullopt, "swizzle sA");
  bad.verdict = Verdict::mismatch;
  bad.note = "mismatch after 2 repair rounds: max abs err 3.1e-2\nat (17, 4)";
  EXPECT_EQ(format_step(bad),
            "step 8: swizzle sA -> wrong result (mismatch), rolled back: mismatch after 2 repair rounds: max abs err "
            "3.1e-2 at (17, 4)");
  StepRecord slower = step(9, StepOutcome::slower, 0.5);
  slower.speedup = 0.8;
  slower.note = "needed more than the noise, 0.01 ms";
  EXPECT_EQ(format_step(slower),
            "step 9: idea -> correct but not faster, rolled back: 0.5 ms; 0.80x the best before; needed more than the "
            "noise, 0.01 ms");
}

TEST(PromptHistory, AnUndoneStepIsAFailedIdeaWithItsEvidence) {
  StepRecord s = step(3, StepOutcome::undone, std::nullopt, "split-k over 4 blocks");
  s.verdict = Verdict::nondeterministic;
  s.note = "trial 2 failed: two runs differ";
  s.evidence = "two runs on the same inputs differ by up to 0.03 (a race)";
  const std::string line = format_step(s);
  EXPECT_EQ(line,
            "step 3: split-k over 4 blocks -> broke the kernel: wrong result (nondeterministic); the repair only undid "
            "the change, so the idea failed: trial 2 failed: two runs differ; evidence: two runs on the same inputs "
            "differ by up to 0.03 (a race)");
  EXPECT_EQ(line.find("not faster"), std::string::npos);
}

TEST(PromptHistory, RepairRoundsAndSynthesisAttemptsAreLabelledAsWhatTheyWere) {
  StepRecord repair{.kind = StepKind::repair, .n = 2, .idea = "DIAGNOSIS: k-loop bound", .outcome = StepOutcome::incorrect,
                    .verdict = Verdict::compile_error};
  EXPECT_EQ(format_step(repair), "repair 2: DIAGNOSIS: k-loop bound -> compile error (compile_error)");
  StepRecord attempt{.kind = StepKind::synthesis, .n = 1, .outcome = StepOutcome::unusable, .note = "no code block"};
  EXPECT_EQ(format_step(attempt), "synthesis attempt 1 -> answer unusable (format or edits did not apply): no code block");
  StepRecord declined{.n = 4, .outcome = StepOutcome::declined, .note = "at 96% of the floor"};
  EXPECT_EQ(format_step(declined), "step 4 -> declined: no further change proposed: at 96% of the floor");
}

TEST(PromptHistory, TuningSaysWhatItChose) {
  StepRecord tuned{.kind = StepKind::tuning, .n = 2, .idea = "tuned the knobs (24 variants)",
                   .outcome = StepOutcome::accepted, .time_ms = 0.9, .speedup = 1.1,
                   .note = "chose EW_THREADS=512 EW_UNROLL=8 over the default (EW_THREADS=256 EW_UNROLL=4)"};
  EXPECT_EQ(format_step(tuned),
            "tuning after step 2: tuned the knobs (24 variants) -> faster knob values found, now the kernel's defaults: "
            "0.9 ms; 1.10x the best before; chose EW_THREADS=512 EW_UNROLL=8 over the default (EW_THREADS=256 "
            "EW_UNROLL=4)");
  StepRecord kept{.kind = StepKind::tuning, .n = 0, .idea = "tuned the knobs (6 variants)",
                  .outcome = StepOutcome::slower, .note = "kept the default (T=256): no variant beat the default"};
  EXPECT_EQ(format_step(kept),
            "tuning of the first kernel: tuned the knobs (6 variants) -> no faster knob values, the defaults stay: kept "
            "the default (T=256): no variant beat the default");
}

TEST(PromptHistory, LongFieldsAreClipped) {
  StepRecord s = step(1, StepOutcome::incorrect, std::nullopt, std::string(500, 'x'));
  s.verdict = Verdict::compile_error;
  s.note = std::string(500, 'y');
  HistoryLimits limits;
  limits.max_idea_chars = 20;
  limits.max_detail_chars = 10;
  const std::string line = format_step(s, limits);
  EXPECT_EQ(line, "step 1: " + std::string(17, 'x') + "... -> compile error (compile_error), rolled back: yyyyyyy...");
}

TEST(PromptHistory, OneLineNeverSplitsUtf8) {
  EXPECT_EQ(one_line("ααααα", 7), "αα...");  // each α is two bytes: 4 bytes fit
  EXPECT_EQ(one_line("ααααα", 6), "α...");   // 3 bytes would split the second α
  EXPECT_EQ(one_line("  a \n\t b  ", 10), "a b");
}

TEST(PromptHistory, BoundedKeepsLastNPlusTheBest) {
  std::vector<StepRecord> steps;
  steps.push_back(step(1, StepOutcome::accepted, 2.0));
  steps.push_back(step(2, StepOutcome::accepted, 0.9));  // the best, old
  for (int n = 3; n <= 20; ++n) steps.push_back(step(n, n % 2 ? StepOutcome::slower : StepOutcome::incorrect, 1.5));
  HistoryLimits limits;
  limits.keep_last = 4;
  const std::string text = format_history(steps, limits);
  EXPECT_EQ(count_lines(text), 7) << text;  // skipped, best, skipped, 4 recent
  EXPECT_TRUE(contains(text, "(1 step not shown)\nstep 2: idea -> improved, kept: 0.9 ms [best]\n(14 steps not shown)\nstep 17:"))
      << text;
  EXPECT_TRUE(contains(text, "step 20:")) << text;
}

TEST(PromptHistory, BestAmongRecentIsMarkedInPlace) {
  std::vector<StepRecord> steps{step(1, StepOutcome::accepted, 1.0), step(2, StepOutcome::accepted, 0.5),
                                step(3, StepOutcome::slower, 0.4)};  // faster but not kept: never the best
  const std::string text = format_history(steps);
  EXPECT_EQ(count_lines(text), 3);
  EXPECT_TRUE(contains(text, "step 2: idea -> improved, kept: 0.5 ms [best]")) << text;
  EXPECT_FALSE(contains(text, "step 3: idea -> correct but not faster, rolled back: 0.4 ms [best]")) << text;
}

TEST(PromptHistory, EmptyHistoryUsesTheGivenText) {
  EXPECT_EQ(format_history({}, {}, "No steps."), "No steps.");
}

TEST(PromptHistory, HistoryStaysBoundedForLongRuns) {
  std::vector<StepRecord> steps;
  for (int n = 1; n <= 500; ++n) steps.push_back(step(n, StepOutcome::slower, 1.0, std::string(300, 'i')));
  const std::string text = format_history(steps);
  EXPECT_LE(count_lines(text), 10);
  EXPECT_LT(text.size(), 2000u);
}

TEST(PromptHistory, AStepWithSeveralCandidatesNamesTheOnesThatLostOrFailed) {
  StepRecord s = step(2, StepOutcome::accepted, 0.5, "16-byte vectors");
  s.candidates = {{.n = 1, .item = "1. fuse", .idea = "fuse the passes", .outcome = CandidateOutcome::lost},
                  {.n = 2, .item = "2. vectorize", .idea = "16-byte vectors", .outcome = CandidateOutcome::chosen},
                  {.n = 3, .item = "3. unroll", .idea = "more unrolling", .outcome = CandidateOutcome::failed,
                   .verdict = Verdict::compile_error},
                  {.n = 4, .item = "4. grid", .outcome = CandidateOutcome::declined}};
  const std::string line = format_step(s, HistoryLimits{}, false);
  EXPECT_TRUE(contains(line, "other candidates: fuse the passes (correct, slower in screening), more unrolling "
                             "(compile_error)"))
      << line;
  // Without candidates the line is as it always was.
  s.candidates.clear();
  EXPECT_FALSE(contains(format_step(s, HistoryLimits{}, false), "candidates"));
}
