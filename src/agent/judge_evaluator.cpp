#include "agent/judge_evaluator.h"

#include <fmt/format.h>

#include "common/fs.h"
#include "common/sha256.h"

namespace cutegen {
namespace {

std::optional<double> baseline_ms(const nlohmann::json& baselines, const char* mode) {
  if (!baselines.is_object() || !baselines.contains(mode)) return std::nullopt;
  const auto& b = baselines[mode];
  if (!b.is_object() || !b.contains("median_ms")) return std::nullopt;  // e.g. torch.compile failed
  return b["median_ms"].get<double>();
}

}  // namespace

Evaluation evaluation_from_report(const EvalReport& report) {
  Evaluation e;
  e.passed = report.passed();
  e.verdict = to_string(report.verdict);
  e.reason = report.reason;
  e.evidence = report.evidence;
  e.report = report.to_json();
  if (report.compile.ok()) e.library = report.compile.library.string();
  if (e.passed) {
    e.median_ms = report.median_ms();
    e.iqr_ms = report.iqr_ms();
    if (e.report.contains("speedup")) {
      const auto& s = e.report["speedup"];
      if (s.contains("eager")) e.speedup_eager = s["eager"].get<double>();
      if (s.contains("compile")) e.speedup_compile = s["compile"].get<double>();
    }
    if (e.report.contains("sol_pct")) e.sol_pct = e.report["sol_pct"].get<double>();
  }
  return e;
}

ProblemInfo problem_info_from_report(const EvalReport& report, std::string problem_source) {
  ProblemInfo p;
  p.name = report.problem.value("name", "problem");
  p.source = std::move(problem_source);
  p.workload_class = report.problem.value("workload_class", "other");
  p.metadata = report.problem;
  p.eager_ms = baseline_ms(report.baselines, "eager");
  p.compile_ms = baseline_ms(report.baselines, "compile");
  if (report.floor) {
    p.floor_ms = report.floor->floor_ms;
    p.bound = report.floor->bound;
  }
  return p;
}

Result<std::string> JudgeEvaluator::fingerprint() {
  auto source = read_file(problem_);
  if (!source) return source.error();
  return sha256_hex(*source + "\nprecision=" + precision_);
}

Result<ProblemInfo> JudgeEvaluator::describe() {
  auto source = read_file(problem_);
  if (!source) return source.error();
  auto report = judge_.describe(problem_);
  if (!report) return report.error();
  return problem_info_from_report(*report, *source);
}

Result<Evaluation> JudgeEvaluator::evaluate(const std::string& source, const std::string& display_name) {
  auto report = judge_.evaluate(problem_, source, display_name);
  if (!report) return report.error();
  return evaluation_from_report(*report);
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
