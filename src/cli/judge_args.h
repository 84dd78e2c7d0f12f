#pragma once
// The judge's options as every command that runs it parses them (eval, profile, optimize, tune, bench).
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "run/judge.h"

namespace cutegen::cli {

// The options every command that runs the judge shares (eval, profile, optimize). The defaults are
// eval's and tune's; the loop (cli/loop_args.h) and profile take fewer trials and say why in --help.
struct JudgeArgs {
  std::string precision = to_string(kDefaultPrecision);
  int trials = 5;
  int runs = 100;
  bool runs_given = false;  // --runs on the command line: exactly that many, no staging budget
  int generalize = kDefaultGeneralize;  // generalization trials: other shapes of the problem after a pass (judge.h)
  uint64_t seed = 0;
  int runner_timeout_s = 120;
  std::string arch;

  // Everything but runner, work_dir and cache_root; `precision` was checked by add_judge_options.
  EvalOptions eval_options() const;
};
// --precision --trials --runs --generalize --seed --runner-timeout --arch; `trials_what` ends the --trials help.
void add_judge_options(CLI::App* cmd, JudgeArgs& args, const std::string& trials_what);

}  // namespace cutegen::cli
