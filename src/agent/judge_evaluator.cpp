#include "agent/judge_evaluator.h"

#include <fmt/format.h>

#include "common/fs.h"
#include "common/sha256.h"

namespace cutegen {

Result<ProblemInfo> problem_info_from_report(const EvalReport& report, std::string problem_source) {
  if (!report.problem) return Error{"internal: the judge described the problem without loading it"};
  ProblemInfo p;
  p.source = std::move(problem_source);
  p.facts = *report.problem;
  p.baselines = report.baselines;
  p.floor = report.floor;
  p.seconds = report.seconds;
  p.phase_seconds = report.phase_seconds;
  return p;
}

Result<std::string> JudgeEvaluator::fingerprint() {
  auto source = read_file(problem_);
  if (!source) return source.error();
  return sha256_hex(*source + "\nprecision=" + to_string(precision_));
}

Result<ProblemInfo> JudgeEvaluator::describe() {
  auto source = read_file(problem_);
  if (!source) return source.error();
  auto report = judge_.describe(problem_);
  if (!report) return report.error();
  return problem_info_from_report(*report, *source);
}

Result<Evaluation> JudgeEvaluator::evaluate(const std::string& source, const std::string& display_name,
                                            std::optional<double> bar_ms) {
  auto report = bar_ms ? judge_.evaluate_below(problem_, source, display_name, *bar_ms)
                       : judge_.evaluate(problem_, source, display_name);
  if (!report) return report.error();
  return report->record();
}

Result<std::optional<Evaluation>> JudgeEvaluator::compile(const std::string& source, const std::string& display_name) {
  auto outcome = compiler_.compile({source, display_name});
  if (!outcome) return outcome.error();
  if (outcome->ok()) return std::optional<Evaluation>{};
  Evaluation e;
  e.precision = precision_;
  record_compile_failure(*outcome, e);
  return std::optional<Evaluation>(std::move(e));
}

Result<Evaluation> JudgeEvaluator::screen(const std::string& source, const std::string& display_name) {
  auto report = judge_.screen(problem_, source, display_name, {});
  if (!report) return report.error();
  return report->record();
}

Result<std::vector<Evaluation>> JudgeEvaluator::screen_all(const std::vector<std::string>& sources,
                                                           const std::string& display_name) {
  std::vector<CompileRequest> kernels;
  for (const auto& source : sources) kernels.push_back({source, display_name, {}});
  auto reports = judge_.screen_all(problem_, kernels);
  if (!reports) return reports.error();
  std::vector<Evaluation> out;
  for (const auto& r : *reports) out.push_back(r.record());
  return out;
}

Result<Evaluator::Library> JudgeEvaluator::rebuild_library(const std::string& source, const std::string& display_name) {
  auto outcome = compiler_.compile({source, display_name});
  if (!outcome) return outcome.error();
  if (!outcome->ok())
    return Error{fmt::format("it no longer compiles cleanly ({}): the toolchain or the checks changed since it was judged",
                             to_string(outcome->verdict))};
  return Library{outcome->library.string(), outcome->key};
}

}  // namespace cutegen
