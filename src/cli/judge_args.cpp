#include "cli/judge_args.h"

#include <fmt/format.h>

#include "common/terminal_text.h"

namespace cutegen::cli {

EvalOptions JudgeArgs::eval_options() const {
  EvalOptions eo;
  // add_judge_options accepts only the policy names, so this parses.
  eo.precision = parse_precision(precision).value();
  eo.trials = trials;
  eo.runs = runs;
  if (runs_given) eo.timed_budget_s.reset();
  eo.generalize = generalize;
  eo.seed = seed;
  eo.runner_timeout = std::chrono::seconds(runner_timeout_s);
  eo.on_busy_retry = [](const std::string& line) { print_safe(stderr, "judge: {}\n", line); };
  return eo;
}

void add_judge_options(CLI::App* cmd, JudgeArgs& a, const std::string& trials_what) {
  cmd->add_option("--precision", a.precision, "strict (fp32 accuracy), tf32 or bf16")
      ->check(CLI::IsMember(precision_names()))
      ->capture_default_str();
  std::string trials_help = "correctness trials on the problem's own inputs (plus signed and scaled)";
  if (!trials_what.empty()) trials_help += " " + trials_what;
  cmd->add_option("--trials", a.trials, trials_help)
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--runs", a.runs,
                  fmt::format("timed calls, each on fresh inputs (half of them signed); by default 100, or as many as "
                              "staging their inputs fits in {} s (at least 30: KernelBench-size problems); a number given "
                              "is run exactly",
                              kDefaultTimedBudgetS))
      ->check(CLI::Range(1, 100000))
      ->each([&a](const std::string&) { a.runs_given = true; });
  cmd->add_option("--generalize", a.generalize,
                  "generalization trials after a pass: the kernel at other shapes of the problem (smaller odd sizes, a "
                  "larger batch, batch 1 from the third trial on), each in a runner of its own; wrong results there "
                  "fail it (shape_specific); in optimize, only for a step's kernel faster than the best (a slower one is "
                  "rolled back). 0: only the problem's own shape is verified")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  cmd->add_option("--seed", a.seed,
                  "seed for the correctness trials (default: fresh, recorded in the report); timed calls always draw "
                  "unforeseeable inputs");
  cmd->add_option("--runner-timeout", a.runner_timeout_s,
                  "seconds one call of the kernel may take before its runner is killed and the kernel judged a timeout")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_option("--arch", a.arch, "compile target (default sm_90a)");
}

}  // namespace cutegen::cli
