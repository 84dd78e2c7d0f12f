#include "cli/loop_args.h"

#include <fmt/format.h>

#include "tune/tuner.h"

namespace cutegen::cli {

void LoopArgs::apply_to(LoopOptions& lo) const {
  lo.max_steps = steps;
  lo.repair_budget = repair_budget;
  lo.max_restarts = restarts;
  lo.plateau_steps = plateau;
  lo.candidates = candidates;
  if (target_sol > 0) lo.target_sol_pct = target_sol;
}

std::string loop_trials_help() {
  return fmt::format("per evaluation ({} here, {} in `cutegen eval`: the loop judges every candidate it writes; "
                     "`cutegen eval` of best/kernel.cu runs the full trials)",
                     loop_judge_args().trials, JudgeArgs{}.trials);
}

void add_loop_options(CLI::App* cmd, LoopArgs& a, const std::string& scope) {
  cmd->add_option("--steps", a.steps, scope + "optimisation steps")->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--repair-budget", a.repair_budget, scope + "diagnose+repair rounds per candidate")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--restarts", a.restarts, scope + "fresh syntheses after a failed one")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--plateau", a.plateau, scope + "stop after this many steps without improvement")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--candidates", a.candidates,
                  scope + fmt::format("proposals per optimisation step (1 to {}), asked at once, each for its own item "
                                      "of the optimisation menu; they are compiled together, screened, and the fastest "
                                      "correct one is judged in full and kept or rolled back (1: one proposal per "
                                      "step, the paper's loop; docs/internals.md, The loop)",
                                      kMaxCandidates))
      ->check(CLI::Range(1, kMaxCandidates))
      ->capture_default_str();
  cmd->add_option("--target-sol", a.target_sol, scope + "stop once the best kernel reaches this % of the roofline floor")
      ->check(CLI::Range(1.0, 100.0));
  cmd->add_option("--start", a.start,
                  scope + "the first kernel: auto (the seed when the problem has one, else the LLM's), seed (fail "
                          "without one) or scratch (the LLM writes it); docs/seed.md")
      ->check(CLI::IsMember({"auto", "seed", "scratch"}))
      ->capture_default_str();
  cmd->add_option("--examples", a.examples,
                  scope + "library: the first prompts show the library kernel chosen for the problem as a reference "
                          "for idioms; none: no library kernel (the paper's setting is --start scratch --examples "
                          "none; docs/prompts.md)")
      ->check(CLI::IsMember({"library", "none"}))
      ->capture_default_str();
  cmd->add_option("--profile-from", a.profile_from,
                  scope + "when profiles enter the prompt: auto (per workload), always, never, or a step number")
      ->capture_default_str();
  cmd->add_option("--tune", a.tune,
                  scope + fmt::format("auto: after each accepted step, tune the best kernel's `cutegen:knob` values "
                                      "(at most config tune.loop_max_variants variants, {}; docs/tuning.md); never: "
                                      "do not",
                                      TuneConfig{}.loop_max_variants))
      ->check(CLI::IsMember({"auto", "never"}))
      ->capture_default_str();
}

}  // namespace cutegen::cli
