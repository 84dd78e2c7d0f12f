#pragma once
// The real Evaluator: the judge (compile, isolated runner, checks, timing, baselines, roofline) on
// one problem file.
#include <filesystem>

#include "agent/evaluator.h"
#include "run/judge.h"

namespace cutegen {

class JudgeEvaluator : public Evaluator {
 public:
  // `compiler` is the one the judge uses (rebuild_library must produce what the judge would).
  JudgeEvaluator(Judge& judge, Compiler& compiler, std::filesystem::path problem, Precision precision)
      : judge_(judge), compiler_(compiler), problem_(std::move(problem)), precision_(precision) {}
  Result<ProblemInfo> describe() override;
  Result<std::string> fingerprint() override;
  Result<Evaluation> evaluate(const std::string& source, const std::string& display_name,
                              std::optional<double> bar_ms) override;
  // The judge's compiler, which is safe to call from several threads (its cache locks per key).
  Result<std::optional<Evaluation>> compile(const std::string& source, const std::string& display_name) override;
  Result<Evaluation> screen(const std::string& source, const std::string& display_name) override;
  Result<std::vector<Evaluation>> screen_all(const std::vector<std::string>& sources,
                                             const std::string& display_name) override;
  Result<Library> rebuild_library(const std::string& source, const std::string& display_name) override;

 private:
  Judge& judge_;
  Compiler& compiler_;
  std::filesystem::path problem_;
  Precision precision_;
};

// Pure mapping, tested on its own. Error: the report has no problem facts (a describe that did not load).
Result<ProblemInfo> problem_info_from_report(const EvalReport& report, std::string problem_source);

}  // namespace cutegen
