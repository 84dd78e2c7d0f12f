#pragma once
// The loop's view of the judge: what it needs to decide (pass/fail, the evidence for the diagnose
// step, the time and its noise) and nothing else, so the loop's tests script evaluations directly.
// JudgeEvaluator (judge_evaluator.h) adapts the real judge; results are the evaluation record
// (common/evaluation.h), which the run log records and replays on resume.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"
#include "common/problem_info.h"
#include "common/result.h"

namespace cutegen {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Error: the tool failed (worker died, nvcc missing). A bad kernel is an Evaluation, not an Error.
  virtual Result<ProblemInfo> describe() = 0;
  // Identifies the problem as evaluated (file content, precision): a resumed run whose log was made
  // for another fingerprint is refused rather than replayed against a changed problem.
  virtual Result<std::string> fingerprint() = 0;
  // `bar_ms`: the time the kernel must beat to be kept (an optimisation step's); the judge then runs what only a
  // kept kernel needs (other shapes, the scaled trial, the full audits) only for a kernel below it
  // (EvalOptions::keep_bar_ms). nullopt: always (a first kernel).
  virtual Result<Evaluation> evaluate(const std::string& source, const std::string& display_name,
                                      std::optional<double> bar_ms) = 0;

  // A step with several candidates (--candidates) compiles them at once and screens them before the
  // best is evaluated in full.
  // The compile and the static checks alone, from several threads at once: nullopt when the kernel
  // compiled cleanly (evaluate() then finds it in the compile cache), else its failing evaluation
  // (compile_error or rejected, with the compiler's evidence) as evaluate() would record it.
  virtual Result<std::optional<Evaluation>> compile(const std::string& source, const std::string& display_name) = 0;
  // The judge's screening settings (one trial, fewer timed calls, no baselines, no other shapes; every
  // check still runs): a rank among candidates, never reported as a result.
  virtual Result<Evaluation> screen(const std::string& source, const std::string& display_name) = 0;
  // Several kernels screened at once (the judge's screening group: one session for all, each call's inputs
  // staged once); one evaluation per source, in order. By default one screen() after another.
  virtual Result<std::vector<Evaluation>> screen_all(const std::vector<std::string>& sources,
                                                     const std::string& display_name) {
    std::vector<Evaluation> out;
    for (const auto& source : sources) {
      auto e = screen(source, display_name);
      if (!e) return e.error();
      out.push_back(std::move(*e));
    }
    return out;
  }

  // The library of an already judged kernel, built again (a compile-cache hit, or nvcc once more):
  // a best kernel's library can leave the cache (pruned, cleared) while its run is stopped, and the
  // run's source of truth is the logged source, not the cache. `key` is the compile key it was built
  // under. Error: it cannot be built (toolchain gone) or no longer compiles cleanly.
  struct Library {
    std::string path;
    std::string key;
  };
  virtual Result<Library> rebuild_library(const std::string& source, const std::string& display_name) = 0;
};

}  // namespace cutegen
