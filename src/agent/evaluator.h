#pragma once
// The loop's view of the judge: what it needs to decide (pass/fail, the evidence for the diagnose
// step, the time and its noise) and nothing else, so the loop's tests script evaluations directly.
// JudgeEvaluator (judge_evaluator.h) adapts the real judge; results are the evaluation record
// (common/evaluation.h), which the run log records and replays on resume.
#include <optional>
#include <string>

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
  virtual Result<Evaluation> evaluate(const std::string& source, const std::string& display_name) = 0;

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
