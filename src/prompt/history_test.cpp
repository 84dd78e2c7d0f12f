#include "prompt/history.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace cutegen;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

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

TEST(PromptHistory, OneLinePerStepWithOutcomeTimeAndSpeedup) {
  StepRecord s = step(7, StepOutcome::improved, 0.41234, "3xTF32 tensor-core MMA\n(16x8x8 atoms)");
  s.speedup = 1.314;
  EXPECT_EQ(format_step(s, {}, true),
            "step 7: 3xTF32 tensor-core MMA (16x8x8 atoms) -> improved, kept: 0.4123 ms; 1.31x vs the best before "
            "[best]");
  StepRecord bad = step(8, StepOutcome::wrong_result, std::nullopt, "swizzle sA");
  bad.detail = "max abs err 3.1e-2\nat (17, 4)";
  EXPECT_EQ(format_step(bad), "step 8: swizzle sA -> wrong result: max abs err 3.1e-2 at (17, 4)");
  EXPECT_EQ(format_step(step(9, StepOutcome::not_faster, 0.5)), "step 9: idea -> correct but not faster, rolled back: 0.5 ms");
}

TEST(PromptHistory, LongFieldsAreClipped) {
  StepRecord s = step(1, StepOutcome::compile_error, std::nullopt, std::string(500, 'x'));
  s.detail = std::string(500, 'y');
  HistoryLimits limits;
  limits.max_idea_chars = 20;
  limits.max_detail_chars = 10;
  const std::string line = format_step(s, limits);
  EXPECT_EQ(line, "step 1: " + std::string(17, 'x') + "... -> compile error: yyyyyyy...");
}

TEST(PromptHistory, OneLineNeverSplitsUtf8) {
  EXPECT_EQ(one_line("ααααα", 7), "αα...");  // each α is two bytes: 4 bytes fit
  EXPECT_EQ(one_line("ααααα", 6), "α...");   // 3 bytes would split the second α
  EXPECT_EQ(one_line("  a \n\t b  ", 10), "a b");
}

TEST(PromptHistory, BoundedKeepsLastNPlusTheBest) {
  std::vector<StepRecord> steps;
  steps.push_back(step(1, StepOutcome::improved, 2.0));
  steps.push_back(step(2, StepOutcome::improved, 0.9));  // the best, old
  for (int n = 3; n <= 20; ++n) steps.push_back(step(n, n % 2 ? StepOutcome::not_faster : StepOutcome::compile_error, 1.5));
  auto kept = bounded_history(steps, 4);
  ASSERT_EQ(kept.size(), 5u);
  EXPECT_EQ(kept[0].n, 2);
  EXPECT_EQ(kept[1].n, 17);
  EXPECT_EQ(kept[4].n, 20);

  HistoryLimits limits;
  limits.keep_last = 4;
  const std::string text = format_history(steps, limits);
  EXPECT_EQ(count_lines(text), 7) << text;  // skipped, best, skipped, 4 recent
  EXPECT_TRUE(contains(text, "(1 step not shown)\nstep 2: idea -> improved, kept: 0.9 ms [best]\n(14 steps not shown)\nstep 17:"))
      << text;
}

TEST(PromptHistory, BestAmongRecentIsMarkedInPlace) {
  std::vector<StepRecord> steps{step(1, StepOutcome::improved, 1.0), step(2, StepOutcome::improved, 0.5),
                                step(3, StepOutcome::not_faster, 0.4)};  // faster but not kept? not "improved": no
  const std::string text = format_history(steps);
  EXPECT_EQ(count_lines(text), 3);
  EXPECT_TRUE(contains(text, "step 2: idea -> improved, kept: 0.5 ms [best]")) << text;
  EXPECT_FALSE(contains(text, "step 3: idea -> correct but not faster, rolled back: 0.4 ms [best]")) << text;
}

TEST(PromptHistory, EmptyHistoryUsesTheGivenText) {
  EXPECT_EQ(format_history({}, {}, "No steps."), "No steps.");
  EXPECT_TRUE(bounded_history({}, 3).empty());
}

TEST(PromptHistory, HistoryStaysBoundedForLongRuns) {
  std::vector<StepRecord> steps;
  for (int n = 1; n <= 500; ++n) steps.push_back(step(n, StepOutcome::not_faster, 1.0, std::string(300, 'i')));
  const std::string text = format_history(steps);
  EXPECT_LE(count_lines(text), 10);
  EXPECT_LT(text.size(), 2000u);
}
