#include "cli/loop_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tune/tuner.h"

using namespace cutegen;
using namespace cutegen::cli;

namespace {

// Parses `argv` (after the program name) into a LoopArgs the way optimize and bench do.
LoopArgs parse(std::vector<std::string> argv, const std::string& scope = "") {
  CLI::App app;
  LoopArgs args;
  add_loop_options(&app, args, scope);
  std::reverse(argv.begin(), argv.end());  // CLI11 takes the arguments last first
  app.parse(argv);
  return args;
}

TEST(LoopArgs, DefaultsAreTheLoopsOwn) {
  const LoopOptions loop;
  LoopArgs args = parse({});
  EXPECT_EQ(args.steps, loop.max_steps);
  EXPECT_EQ(args.repair_budget, loop.repair_budget);
  EXPECT_EQ(args.restarts, loop.max_restarts);
  EXPECT_EQ(args.plateau, loop.plateau_steps);
  LoopOptions applied;
  applied.max_steps = -1;
  args.apply_to(applied);
  EXPECT_EQ(applied.max_steps, loop.max_steps);
  EXPECT_FALSE(applied.target_sol_pct.has_value());  // no --target-sol: no target
}

TEST(LoopArgs, OptionsReachTheLoop) {
  LoopArgs args = parse({"--steps", "3", "--repair-budget", "1", "--restarts", "0", "--plateau", "2",
                         "--target-sol", "80", "--start", "seed", "--tune", "never"});
  LoopOptions lo;
  args.apply_to(lo);
  EXPECT_EQ(lo.max_steps, 3);
  EXPECT_EQ(lo.repair_budget, 1);
  EXPECT_EQ(lo.max_restarts, 0);
  EXPECT_EQ(lo.plateau_steps, 2);
  ASSERT_TRUE(lo.target_sol_pct.has_value());
  EXPECT_DOUBLE_EQ(*lo.target_sol_pct, 80);
  EXPECT_EQ(args.start, "seed");
  EXPECT_EQ(args.tune, "never");
  EXPECT_THROW(parse({"--start", "later"}), CLI::ValidationError);
}

TEST(LoopArgs, HelpShowsTheDefaultsAndTheScope) {
  CLI::App app;
  LoopArgs args;
  add_loop_options(&app, args, "per task: ");
  const std::string help = app.help();
  const LoopOptions loop;
  EXPECT_NE(help.find("per task: optimisation steps"), std::string::npos) << help;
  // CLI11 shows a default as "=VALUE" after the type.
  EXPECT_NE(help.find("--steps INT:INT in [0 - 1000]=" + std::to_string(loop.max_steps)), std::string::npos) << help;
  EXPECT_NE(help.find("--plateau INT:INT in [1 - 1000]=" + std::to_string(loop.plateau_steps)), std::string::npos) << help;
  // The loop's tuning budget is the configuration's default, not a number of its own.
  EXPECT_NE(help.find("tune.loop_max_variants variants, " + std::to_string(TuneConfig{}.loop_max_variants)),
            std::string::npos)
      << help;
}

TEST(LoopArgs, TheLoopJudgesWithFewerTrialsAndSaysWhy) {
  const JudgeArgs loop_judge = loop_judge_args();
  EXPECT_LT(loop_judge.trials, JudgeArgs{}.trials);
  const std::string help = loop_trials_help();
  EXPECT_NE(help.find(std::to_string(loop_judge.trials) + " here, " + std::to_string(JudgeArgs{}.trials) + " in `cutegen eval`"),
            std::string::npos)
      << help;
}

}  // namespace

TEST(LoopArgs, CandidatesAreOneToEightAndReachTheLoop) {
  EXPECT_EQ(parse({}).candidates, 1);  // the paper's loop unless asked
  LoopOptions lo;
  parse({"--candidates", "3"}).apply_to(lo);
  EXPECT_EQ(lo.candidates, 3);
  for (const char* wrong : {"0", "9", "-1", "three"}) {
    try {
      parse({"--candidates", wrong});
      ADD_FAILURE() << wrong << " was taken";
    } catch (const CLI::ValidationError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--candidates"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;  // one line
    } catch (const CLI::ParseError& e) {
      ADD_FAILURE() << wrong << ": " << e.what();
    }
  }
}
