#include "agent/template_prompter.h"

#include <fmt/format.h>

namespace cutegen {
namespace {

Result<TensorBrief> tensor_brief(const nlohmann::json& e, TensorRole role) {
  TensorBrief t;
  t.name = e.value("name", "");
  t.role = role;
  t.dtype = e.value("dtype", "");
  if (e.value("kind", "tensor") == "scalar") {
    if (role != TensorRole::forward_input)
      return Error{fmt::format("problem metadata: '{}' is a scalar but not a forward() argument", t.name)};
    t.role = TensorRole::host_scalar;
    if (e.contains("value")) t.value = e["value"].dump();
    return t;
  }
  if (!e.contains("shape") || !e["shape"].is_array())
    return Error{fmt::format("problem metadata: tensor '{}' has no shape", t.name)};
  for (const auto& d : e["shape"]) t.shape.push_back(d.get<int64_t>());
  return t;
}

// One verdict table for the prompts (failure_kind_for_verdict), so a repair attempt's outcome and
// the failure kind of the same verdict never disagree.
StepOutcome outcome_from_verdict(const std::string& verdict) {
  if (verdict == "pass") return StepOutcome::improved;
  auto kind = failure_kind_for_verdict(verdict);
  if (!kind) return StepOutcome::runtime_error;  // a verdict the table lacks: failure_evidence reports it
  switch (*kind) {
    case FailureKind::compile_error: return StepOutcome::compile_error;
    case FailureKind::rejected: return StepOutcome::rejected;
    case FailureKind::wrong_result: return StepOutcome::wrong_result;
    case FailureKind::runtime_error: return StepOutcome::runtime_error;
  }
  return StepOutcome::runtime_error;
}

}  // namespace

Result<ProblemBrief> problem_brief(const ProblemInfo& problem, const std::string& precision) {
  ProblemBrief b;
  b.name = problem.name;
  b.reference_source = problem.source;
  auto workload = parse_workload_class(problem.workload_class);
  if (!workload) return workload.error();
  b.workload = *workload;
  const auto& m = problem.metadata;
  for (const auto& e : m.value("inputs", nlohmann::json::array())) {
    auto t = tensor_brief(e, TensorRole::forward_input);
    if (!t) return t.error();
    b.inputs.push_back(*t);
  }
  for (const auto& e : m.value("params", nlohmann::json::array())) {
    auto t = tensor_brief(e, e.value("buffer", false) ? TensorRole::buffer : TensorRole::parameter);
    if (!t) return t.error();
    b.inputs.push_back(*t);
  }
  for (const auto& e : m.value("outputs", nlohmann::json::array())) {
    auto t = tensor_brief(e, TensorRole::output);
    if (!t) return t.error();
    b.outputs.push_back(*t);
  }
  b.precision = precision;
  b.gpu = m.value("gpu", "");
  b.min_bytes = m.value("min_bytes", uint64_t{0});
  b.flops = m.value("flops", uint64_t{0});
  b.floor_ms = problem.floor_ms;
  b.floor_bound = problem.bound;
  b.eager_ms = problem.eager_ms;
  b.compile_ms = problem.compile_ms;
  return b;
}

Result<FailureEvidence> failure_evidence(const Evaluation& failed) {
  FailureEvidence f;
  auto kind = failure_kind_for_verdict(failed.verdict);
  if (!kind) return kind.error();
  f.kind = *kind;
  f.verdict = failed.verdict;
  f.reason = failed.reason;
  f.details = failed.evidence;
  return f;
}

StepRecord step_record(const LoopStep& s) {
  StepRecord r;
  r.n = s.step;
  r.idea = s.idea;
  if (s.outcome == "accepted") r.outcome = StepOutcome::improved;
  else if (s.outcome == "slower") r.outcome = StepOutcome::not_faster;
  else if (s.outcome == "incorrect") r.outcome = StepOutcome::wrong_result;
  else if (s.outcome == "unusable_edit") r.outcome = StepOutcome::bad_answer;
  else r.outcome = outcome_from_verdict(s.outcome);  // repair attempts record the verdict they led to
  r.time_ms = s.time_ms;
  r.speedup = s.speedup;
  r.detail = s.note;
  return r;
}

Result<std::unique_ptr<TemplatePrompter>> TemplatePrompter::create(std::string precision) {
  auto lib = load_prompt_library();
  if (!lib) return lib.error();
  return std::make_unique<TemplatePrompter>(std::move(*lib), std::move(precision));
}

// The rules go in the system message of every request, so the prompts refer to them instead of
// repeating them (shorter prompts; one copy the model weighs as instructions).
static const PromptOptions& options() {
  static const PromptOptions o = [] {
    PromptOptions p;
    p.rules_in_system_prompt = true;
    return p;
  }();
  return o;
}

Result<std::string> TemplatePrompter::system_prompt() { return build_system_prompt(library_); }

Result<std::string> TemplatePrompter::synthesis(const ProblemInfo& problem) {
  auto brief = problem_brief(problem, precision_);
  if (!brief) return brief.error();
  return build_synthesis_prompt(library_, SynthesisInput{*brief}, options());
}

Result<std::string> TemplatePrompter::restart(const ProblemInfo& problem, const std::vector<FailedAttempt>& failures) {
  auto brief = problem_brief(problem, precision_);
  if (!brief) return brief.error();
  RestartInput in{*brief, {}, {}, std::nullopt};
  for (size_t i = 0; i < failures.size(); ++i) {
    StepRecord r;
    r.n = static_cast<int>(i + 1);
    r.idea = fmt::format("synthesis attempt {}", i + 1);
    r.outcome = failures[i].last ? outcome_from_verdict(failures[i].last->verdict) : StepOutcome::bad_answer;
    r.detail = failures[i].summary;
    in.failures.push_back(r);
  }
  if (!failures.empty()) {
    // The last attempt's own evidence, so the fresh kernel can avoid what sank it.
    if (const auto& last = failures.back().last) {
      auto evidence = failure_evidence(*last);
      if (!evidence) return evidence.error();
      in.last_failure = *evidence;
      in.why = fmt::format("the last attempt still failed with {} after its repair rounds", last->verdict);
    } else {
      in.why = "the last answer held no usable kernel";
    }
  }
  return build_restart_prompt(library_, in, options());
}

Result<std::string> TemplatePrompter::diagnose(const ProblemInfo& problem, const std::string& kernel,
                                               const Evaluation& failed, const RepairContext& context) {
  auto brief = problem_brief(problem, precision_);
  if (!brief) return brief.error();
  auto failure = failure_evidence(failed);
  if (!failure) return failure.error();
  DiagnoseInput in{*brief, kernel, *failure, context.change_under_repair, {}};
  for (const auto& a : context.attempts) in.attempts.push_back(step_record(a));
  return build_diagnose_prompt(library_, in, options());
}

Result<std::string> TemplatePrompter::repair(const ProblemInfo& problem, const std::string& kernel,
                                             const Evaluation& failed, const std::string& diagnosis,
                                             const RepairContext& context) {
  auto brief = problem_brief(problem, precision_);
  if (!brief) return brief.error();
  auto failure = failure_evidence(failed);
  if (!failure) return failure.error();
  RepairInput in{*brief, kernel, *failure, diagnosis, {}};
  for (const auto& a : context.attempts) in.attempts.push_back(step_record(a));
  return build_repair_prompt(library_, in, options());
}

Result<std::string> TemplatePrompter::optimize(const ProblemInfo& problem, const std::string& kernel,
                                               const Evaluation& best, const std::vector<LoopStep>& history,
                                               const std::string& profile_summary, int step, int max_steps) {
  auto brief = problem_brief(problem, precision_);
  if (!brief) return brief.error();
  OptimizeInput in{*brief, kernel, best.median_ms, step, max_steps, {}, profile_summary};
  for (const auto& h : history) in.history.push_back(step_record(h));
  return build_optimize_prompt(library_, in, options());
}

}  // namespace cutegen
