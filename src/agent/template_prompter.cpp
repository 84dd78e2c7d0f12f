#include "agent/template_prompter.h"

#include <fmt/format.h>

#include "common/unified_diff.h"
#include "prompt/menu_items.h"

namespace cutegen {
namespace {

Result<TensorBrief> tensor_brief(const ValueFacts& v, TensorRole role) {
  TensorBrief t;
  t.name = v.name;
  t.role = role;
  t.dtype = v.dtype;
  switch (v.kind) {
    case ValueFacts::Kind::tensor:
      t.shape = v.shape;
      return t;
    case ValueFacts::Kind::scalar:
      if (role != TensorRole::forward_input)
        return Error{fmt::format("problem metadata: '{}' is a scalar but not a forward() argument", t.name)};
      t.role = TensorRole::host_scalar;
      t.value = v.value;
      return t;
    case ValueFacts::Kind::other: break;
  }
  return Error{fmt::format("problem metadata: '{}' is neither a tensor nor a number, which the kernel contract "
                           "cannot pass",
                           t.name)};
}

}  // namespace

Result<ProblemBrief> problem_brief(const ProblemInfo& problem, const PromptSettings& settings) {
  const ProblemFacts& f = problem.facts;
  ProblemBrief b;
  b.name = f.name;
  b.reference_source = problem.source;
  b.workload = f.workload_class;
  b.aten_ops = f.aten_ops;
  b.dtype = f.dtype;
  for (const auto& v : f.inputs) {
    auto t = tensor_brief(v, TensorRole::forward_input);
    if (!t) return t.error();
    b.inputs.push_back(*t);
  }
  for (const auto& v : f.params) {
    auto t = tensor_brief(v, v.buffer ? TensorRole::buffer : TensorRole::parameter);
    if (!t) return t.error();
    b.inputs.push_back(*t);
  }
  for (const auto& v : f.outputs) {
    auto t = tensor_brief(v, TensorRole::output);
    if (!t) return t.error();
    b.outputs.push_back(*t);
  }
  b.init_inputs = f.init_inputs;
  b.precision = settings.precision;
  b.gpu = f.gpu;
  b.arch = settings.arch;
  b.other_shapes = settings.other_shapes;
  b.min_bytes = f.min_bytes;
  b.flops = f.flops;
  if (problem.floor) {
    b.floor_ms = problem.floor->floor_ms;
    b.floor_bound = problem.floor->bound;
  }
  if (problem.baselines.eager) b.eager_ms = problem.baselines.eager->median_ms();
  if (problem.baselines.compile) b.compile_ms = problem.baselines.compile->median_ms();
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

Result<std::unique_ptr<TemplatePrompter>> TemplatePrompter::create(PromptSettings settings) {
  auto lib = load_prompt_library();
  if (!lib) return lib.error();
  return std::make_unique<TemplatePrompter>(std::move(*lib), std::move(settings));
}

TemplatePrompter::TemplatePrompter(PromptLibrary library, PromptSettings settings)
    : library_(std::move(library)), settings_(std::move(settings)) {
  options_.show_example = settings_.show_example;
  options_.gpu_placeholders = settings_.gpu_placeholders;
}

Result<std::string> TemplatePrompter::system_prompt(const ProblemInfo& problem, PromptKind kind) {
  auto brief = problem_brief(problem, settings_);
  if (!brief) return brief.error();
  return build_system_prompt(library_, *brief, kind, options_);
}

std::string TemplatePrompter::example_shown(const ProblemInfo& problem) {
  if (!settings_.show_example) return "";
  const ProblemFacts& f = problem.facts;
  return "library/" +
         std::string(choose_example({f.workload_class, f.aten_ops, f.dtype, settings_.precision}).file);
}

Result<std::string> TemplatePrompter::synthesis(const ProblemInfo& problem) {
  auto brief = problem_brief(problem, settings_);
  if (!brief) return brief.error();
  return build_synthesis_prompt(library_, SynthesisInput{*brief}, options_);
}

Result<std::string> TemplatePrompter::restart(const ProblemInfo& problem, const std::vector<FailedAttempt>& failures) {
  auto brief = problem_brief(problem, settings_);
  if (!brief) return brief.error();
  RestartInput in{*brief, {}, {}, std::nullopt};
  for (size_t i = 0; i < failures.size(); ++i) {
    StepRecord r{.kind = StepKind::synthesis, .n = static_cast<int>(i + 1)};
    r.note = failures[i].summary;
    if (const auto& last = failures[i].last) {
      r.outcome = StepOutcome::incorrect;
      r.verdict = last->verdict;
      // The line shows the verdict already; the summary need not say it again.
      const std::string word = to_string(last->verdict) + " ";
      if (r.note.rfind(word, 0) == 0) r.note.erase(0, word.size());
    } else {
      r.outcome = StepOutcome::unusable;
    }
    in.failures.push_back(r);
  }
  if (!failures.empty()) {
    // The last attempt's own evidence, so the fresh kernel can avoid what sank it.
    if (const auto& last = failures.back().last) {
      auto evidence = failure_evidence(*last);
      if (!evidence) return evidence.error();
      in.last_failure = *evidence;
      in.why = fmt::format("the last attempt still failed with {} after its repair rounds", to_string(last->verdict));
    } else {
      in.why = "the last answer held no usable kernel";
    }
  }
  return build_restart_prompt(library_, in, options_);
}

Result<std::string> TemplatePrompter::diagnose(const ProblemInfo& problem, const std::string& kernel,
                                               const Evaluation& failed, const RepairContext& context) {
  auto brief = problem_brief(problem, settings_);
  if (!brief) return brief.error();
  auto failure = failure_evidence(failed);
  if (!failure) return failure.error();
  DiagnoseInput in{*brief, kernel, *failure, context.change_under_repair, "", context.attempts};
  // A step that broke the kernel: what it (and the repairs since) changed, as a diff.
  if (!context.origin.empty() && !context.change_under_repair.empty())
    in.change_diff = unified_diff(context.origin, kernel).text;
  return build_diagnose_prompt(library_, in, options_);
}

Result<std::string> TemplatePrompter::repair(const ProblemInfo& problem, const std::string& kernel,
                                             const Evaluation& failed, const std::string& diagnosis,
                                             const RepairContext& context) {
  auto brief = problem_brief(problem, settings_);
  if (!brief) return brief.error();
  auto failure = failure_evidence(failed);
  if (!failure) return failure.error();
  RepairInput in{*brief, kernel, *failure, diagnosis, context.attempts};
  return build_repair_prompt(library_, in, options_);
}

Result<std::string> TemplatePrompter::optimize(const ProblemInfo& problem, const std::string& kernel,
                                               const Evaluation& best, const std::vector<StepRecord>& history,
                                               const std::string& profile_summary, int step, int max_steps) {
  auto brief = problem_brief(problem, settings_);
  if (!brief) return brief.error();
  OptimizeInput in{*brief, kernel, best.median_ms(), step, max_steps, history, profile_summary, best.compiler_notes};
  return build_optimize_prompt(library_, in, options_);
}

std::vector<std::string> TemplatePrompter::menu_items(const ProblemInfo& problem) {
  return cutegen::menu_items(library_.menu(problem.facts.workload_class));
}

Result<std::string> TemplatePrompter::candidate_share(const ProblemInfo& problem, const CandidateAsk& ask) {
  // The candidate's item in full, unless it is the one the step's optimize request already shows.
  const std::string& menu = library_.menu(problem.facts.workload_class);
  const Menu parsed = parse_menu(menu);
  const MenuItem* item = find_item(parsed, ask.item);
  std::string text = item ? item->shown : std::string("(no menu item has this name: choose by the menu's lines in the system message)");
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (item && menu_item_in_full(menu, ask.step) == text) text.clear();
  return build_candidate_share(library_, {ask.candidate, ask.candidates, ask.item, text, ask.siblings});
}

}  // namespace cutegen
