// The judge's shared options (cli/judge_stack.h) as eval, optimize and bench parse them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/judge_args.h"

using namespace cutegen;
using namespace cutegen::cli;

namespace {

JudgeArgs parse(std::vector<std::string> argv) {
  CLI::App app;
  JudgeArgs args;
  add_judge_options(&app, args, "");
  std::reverse(argv.begin(), argv.end());  // CLI11 takes the arguments last first
  app.parse(argv);
  return args;
}

TEST(JudgeArgs, WithoutRunsTheTimedCallsFitTheStagingBudget) {
  EvalOptions eo = parse({}).eval_options();
  EXPECT_EQ(eo.runs, 100);
  ASSERT_TRUE(eo.timed_budget_s.has_value());
  EXPECT_DOUBLE_EQ(*eo.timed_budget_s, kDefaultTimedBudgetS);
}

TEST(JudgeArgs, RunsGivenAreRunExactlyEvenTheDefaultNumber) {
  for (const char* n : {"100", "12"}) {
    JudgeArgs args = parse({"--runs", n});
    EXPECT_TRUE(args.runs_given);
    EvalOptions eo = args.eval_options();
    EXPECT_EQ(eo.runs, std::stoi(n));
    EXPECT_FALSE(eo.timed_budget_s.has_value()) << "--runs " << n << " left the budget on";
  }
}

}  // namespace
