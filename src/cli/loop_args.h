#pragma once
// The optimisation loop's options as `optimize` takes them and `bench` passes them on to each task's
// optimize: one struct, one set of help lines, and defaults read from LoopOptions (agent/loop.h), where
// they are declared once.
#include <string>

#include <CLI/CLI.hpp>

#include "agent/loop.h"
#include "cli/judge_stack.h"

namespace cutegen::cli {

struct LoopArgs {
  int steps = LoopOptions{}.max_steps;
  int repair_budget = LoopOptions{}.repair_budget;
  int restarts = LoopOptions{}.max_restarts;
  int plateau = LoopOptions{}.plateau_steps;
  int candidates = LoopOptions{}.candidates;
  double target_sol = 0;  // 0: no target
  std::string profile_from = "auto";
  std::string start = "auto";
  std::string tune = "auto";
  std::string examples = "library";

  // Copies the counts and the target into `lo` (the strings are parsed where they are used).
  void apply_to(LoopOptions& lo) const;
};

// The judge's settings inside the loop. Fewer trials than `cutegen eval` (JudgeArgs's default): the
// loop judges every candidate it writes, so each trial costs once per step; every timed call is still
// checked.
inline JudgeArgs loop_judge_args() { return JudgeArgs{.trials = 3}; }
// The end of --trials' help in optimize and bench: the number and why it differs from eval's.
std::string loop_trials_help();

// --steps --repair-budget --restarts --plateau --candidates --target-sol --start --examples --profile-from --tune.
// `scope` opens each help line: "" for optimize, "per task: " for bench.
void add_loop_options(CLI::App* cmd, LoopArgs& args, const std::string& scope);

}  // namespace cutegen::cli
