#include "bench/optimize_result.h"

#include <filesystem>

#include <fmt/format.h>

namespace cutegen::bench {
namespace fs = std::filesystem;
namespace {

TaskRecord base(const std::string& problem, const BudgetSpent& spent) {
  TaskRecord r;
  r.problem = fs::absolute(problem).string();
  r.name = fs::path(problem).stem().string();
  r.tokens = spent.tokens;
  r.cost_usd = spent.cost_usd;
  return r;
}

void take_baselines(const Baselines& b, TaskRecord& r) {
  if (b.eager) {
    if (b.eager->median_ms()) r.eager_ms = b.eager->median_ms();
    r.eager_error = b.eager->error;
  }
  if (b.compile) {
    if (b.compile->median_ms()) r.compile_ms = b.compile->median_ms();
    r.compile_error = b.compile->error;
  }
}

}  // namespace

std::string seed_failure_line(const std::string& pattern, const std::optional<Evaluation>& seed) {
  std::string line = fmt::format("the seed kernel for y = {} failed the judge", pattern);
  return seed ? line + ": " + seed->verdict_line() : line;
}

TaskRecord task_record_from(const LoopResult& result, const std::string& problem, const BudgetSpent& spent) {
  TaskRecord r = base(problem, spent);
  r.verdict = result.best ? TaskVerdict::correct : TaskVerdict::no_correct_kernel;
  r.stop_reason = result.stop_reason;
  r.detail = result.stop_detail;
  // The seed's expression alone does not say what went wrong: the suite's line says why it failed.
  if (result.stop_reason == "seed_failed")
    r.detail = seed_failure_line(result.stop_detail, result.failed_seed);
  const ProblemInfo& p = result.problem;
  r.device = p.facts.gpu;
  r.flops = p.facts.flops;
  r.min_bytes = p.facts.min_bytes;
  take_baselines(p.baselines, r);
  if (p.floor) {
    if (p.floor->floor_ms > 0) r.floor_ms = p.floor->floor_ms;
    r.floor_bound = p.floor->bound;
  }
  if (result.best) {
    const Evaluation& e = result.best->evaluation;
    r.best_ms = e.median_ms();
    // The best kernel's own baselines were measured with it (same session, same seeds): prefer them.
    take_baselines(e.baselines, r);
    r.sol_pct = e.sol_pct();
  }
  for (const auto& h : result.history)
    if (h.kind == StepKind::optimization) ++r.steps;
  r.syntheses = result.syntheses;
  r.llm_calls = result.llm_calls;
  r.example = result.example_shown;
  r.seed = result.seed_pattern;
  r.seed_ms = result.seed_ms;
  return r;
}

TaskRecord task_record_from(const Error& error, const std::string& problem, const BudgetSpent& spent) {
  TaskRecord r = base(problem, spent);
  r.verdict = error.kind == ErrorKind::problem_file ? TaskVerdict::problem_error : TaskVerdict::crashed;
  r.detail = error.message.substr(0, error.message.find('\n'));
  return r;
}

}  // namespace cutegen::bench
