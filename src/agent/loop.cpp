#include "agent/loop.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "common/json_text.h"
#include "common/sha256.h"
#include "edit/answer_parser.h"
#include "edit/apply_edits.h"
#include "common/unified_diff.h"

namespace cutegen {
namespace {

constexpr std::size_t kLine = 160;  // progress lines and history notes stay on one screen line

// Same kernel up to whitespace at line ends and blank lines: a repair that "undid" a change by
// retyping the old lines is still the old kernel.
std::string normalized(const std::string& source) {
  std::string out, line;
  for (std::size_t pos = 0; pos <= source.size();) {
    std::size_t nl = std::min(source.find('\n', pos), source.size());
    line = source.substr(pos, nl - pos);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) out += line + "\n";
    pos = nl + 1;
  }
  return out;
}

AnswerEnd answer_end(bool truncated) { return truncated ? AnswerEnd::truncated : AnswerEnd::complete; }

}  // namespace

std::string to_string(LoopPhase p) {
  switch (p) {
    case LoopPhase::describe: return "describe";
    case LoopPhase::synthesize: return "synthesize";
    case LoopPhase::repair: return "repair";
    case LoopPhase::optimize: return "optimize";
    case LoopPhase::done: return "done";
  }
  return "?";
}

Loop::Loop(LlmClient& llm, Evaluator& evaluator, Prompter& prompter, ProfileSource* profiler, Journal& journal,
           RunFiles& files, LoopOptions options, LoopObserver observer)
    : llm_(llm), evaluator_(evaluator), prompter_(prompter), profiler_(profiler), journal_(journal), files_(files),
      options_(std::move(options)), observer_(std::move(observer)) {
  status_.max_steps = options_.max_steps;
}

void Loop::report(const std::string& line) {
  status_.replaying = journal_.replaying();
  if (observer_.progress) observer_.progress(status_, line);
}

Status Loop::decide(const RunEvent& decision) { return journal_.record(decision); }

// --- outside answers, each through the journal -------------------------------------------------

Result<Loop::Answer> Loop::call_llm(LlmPurpose purpose, const std::vector<Message>& messages, CallPlace place) {
  // Asked before the log is, so a resumed run stops here exactly as the original run did. A step's
  // candidates are asked together, so the rule is asked once before all of them (place).
  if (place.check_truncation)
    if (auto ok = truncations_.check(); !ok) {
      llm_stop_ = "truncated";
      return ok.error();
    }
  const std::string key = sha256_hex(dump_json(to_json(messages)));
  auto memo = journal_.recall<LlmEvent>(key);
  if (!memo) return memo.error();
  if (*memo) {
    const LlmEvent& logged = **memo;
    // A resumed run spends what the original run spent, and meets the same run of cut-off answers,
    // so budgets and the truncation rule keep meaning the whole run.
    for (Budget* b : {&llm_.budget(), options_.task_budget}) {
      if (!b) continue;
      if (auto counted = b->replay_call(logged.response.usage.total(), logged.cost_usd); !counted) {
        llm_stop_ = "budget";
        return counted.error();
      }
    }
    truncations_.observe(logged.response, logged.max_tokens, logged.capped_by_budget);
    status_.cost_usd += logged.cost_usd;
    llm_.answered_from_log(LlmRequest{messages, {}});
    return answered(purpose, place.candidate, messages, logged.response);
  }
  auto call = call_live(messages);
  if (!call) {
    if (is_budget_exhausted(call.error())) llm_stop_ = "budget";
    return call.error();
  }
  return commit_live_answer(purpose, place.candidate, messages, *call);
}

Result<LlmCall> Loop::call_live(const std::vector<Message>& messages) {
  // The truncation rule is kept by the loop (call_llm, commit_live_answer), not the client, so calls
  // made at once and answers replayed in log order meet it at the same points.
  return llm_.complete(LlmRequest{messages, {}}, CallOptions{.task_budget = options_.task_budget,
                                                             .task = problem_.name(),
                                                             .truncation = nullptr});
}

Result<Loop::Answer> Loop::commit_live_answer(LlmPurpose purpose, int candidate, const std::vector<Message>& messages,
                                              const LlmCall& call) {
  truncations_.observe(call.response, call.record.max_tokens, call.record.capped_by_budget);
  LlmEvent event{.key = sha256_hex(dump_json(to_json(messages))), .purpose = purpose, .candidate = candidate,
                 .response = call.response, .cost_usd = call.record.cost.usd,
                 .capped_by_budget = call.record.capped_by_budget};
  if (call.record.max_tokens) event.max_tokens = *call.record.max_tokens;
  if (auto r = journal_.record(event); !r) return r.error();
  status_.cost_usd += call.record.cost.usd;
  return answered(purpose, candidate, messages, call.response);
}

Result<Loop::Answer> Loop::answered(LlmPurpose purpose, int candidate, const std::vector<Message>& messages,
                                    const LlmResponse& response) {
  ++llm_calls_;
  status_.tokens += response.usage.total();
  std::string dir = fmt::format("steps/{:03d}-{}{}", ++artifact_seq_, to_string(purpose),
                                candidate > 0 ? fmt::format("-c{}", candidate) : "");
  if (auto w = files_.write(dir + "/prompt.md", render_as_text(messages)); !w) return w.error();
  if (auto w = files_.write(dir + "/answer.md", response.text); !w) return w.error();
  return Answer{response.text, response.finish == FinishReason::length};
}

template <class T>
Result<Loop::Asked<T>> Loop::converse(LlmPurpose purpose, std::vector<Message> messages, const Caller& call,
                                      const std::function<Result<T>(const Answer&)>& use,
                                      const std::function<void(const std::string&)>& say) const {
  Asked<T> out;
  for (int attempt = 0; attempt <= options_.answer_retries; ++attempt) {
    auto answer = call(messages);
    if (!answer) return answer.error();
    auto used = use(*answer);
    if (used) {
      out.value = std::move(*used);
      out.unusable.clear();
      return out;
    }
    out.unusable = used.error().message;
    say(fmt::format("{}: answer not usable ({}){}", to_string(purpose), first_line(out.unusable, kLine),
                    attempt < options_.answer_retries ? ", asking again" : ""));
    // The LLM sees its own answer and exactly why it could not be used: cheaper and more reliable
    // than starting the request over.
    messages.push_back({Role::assistant, answer->text});
    messages.push_back({Role::user, fmt::format("Your answer could not be used:\n{}\n\nAnswer again, in the format the "
                                                "rules require.",
                                                out.unusable)});
  }
  return out;
}

template <class T>
Result<Loop::Asked<T>> Loop::ask(LlmPurpose purpose, PromptKind kind, const std::string& prompt,
                                 const std::function<Result<T>(const Answer&)>& use) {
  return converse<T>(
      purpose, request_messages(system_prompts_.at(kind), prompt),
      [this, purpose](const std::vector<Message>& m) { return call_llm(purpose, m); }, use,
      [this](const std::string& line) { report(line); });
}

Result<ProblemInfo> Loop::describe() {
  auto fp = evaluator_.fingerprint();
  if (!fp) return fp.error();
  const std::string key = "describe:" + *fp;
  auto memo = journal_.recall<ProblemEvent>(key);
  if (!memo) return memo.error();
  if (*memo) return (*memo)->problem;
  report("describing the problem (metadata, eager and torch.compile baselines, roofline floor)");
  auto info = evaluator_.describe();
  if (!info) return info.error();
  if (auto line = info->timing_summary(); !line.empty()) report(line);
  if (auto r = journal_.record(ProblemEvent{key, *info}); !r) return r.error();
  return info;
}

Result<Evaluation> Loop::evaluate(const std::string& source, const AttemptLabel& attempt, const std::string& base) {
  const std::string key = sha256_hex(source);
  const std::string label = attempt.text();
  auto memo = journal_.recall<EvalEvent>(key);
  if (!memo) return memo.error();
  Evaluation e;
  if (*memo) {
    e = (*memo)->evaluation;
  } else {
    auto r = evaluator_.evaluate(source, kKernelName, keep_bar(attempt));
    if (!r) return r.error();
    e = *r;
    if (auto w = journal_.record(EvalEvent{key, attempt, e}); !w) return w.error();
  }
  std::string dir = fmt::format("steps/{:03d}-eval-{}", ++artifact_seq_, label);
  if (auto w = files_.write(dir + "/kernel.cu", source); !w) return w.error();
  if (!base.empty())
    if (auto w = files_.write(dir + "/change.diff", unified_diff(base, source).text); !w) return w.error();
  if (auto w = files_.write(dir + "/eval.json", dump_json(e.to_json(), 2)); !w) return w.error();
  if (e.passed()) {
    std::string shapes;
    const auto bar = e.generalization && e.generalization->skipped_bar_ms ? e.generalization->skipped_bar_ms
                                                                          : e.skipped_checks_bar_ms;
    if (bar)
      shapes = fmt::format(", not below {:.4f} ms: none of the checks only a kept kernel needs (other shapes, the "
                           "scaled trial, full audits)", *bar);
    else if (e.generalization && e.generalization->asked > 0)
      shapes = fmt::format(", {} shape(s) verified ({:.1f} s of other shapes)", e.generalization->verified.size(),
                           e.generalization->seconds);
    report(fmt::format("{}: correct, {:.4f} ms{}{}", label, e.median_ms(),
                       e.speedup_eager() ? fmt::format(" ({:.2f}x eager)", *e.speedup_eager()) : "", shapes));
  } else {
    report(fmt::format("{}: {} — {}", label, to_string(e.verdict), first_line(e.reason, kLine)));
  }
  return e;
}

Result<std::string> Loop::profile_summary(int step, int streak) {
  if (!profiler_ || !best_) return std::string();
  const std::string workload(to_string(problem_.facts.workload_class));
  bool use = std::exchange(force_profile_, false);
  if (use) report("profile: shown because the LLM declined before it had seen one");
  else {
    use = options_.profile.should_profile(workload, step, streak);
    report(options_.profile.explain(workload, step, streak));
  }
  if (!use) return std::string();
  profile_shown_ = true;
  const std::string key = sha256_hex(best_->source);
  if (auto known = profiles_.find(key); known != profiles_.end()) return known->second;
  auto memo = journal_.recall<ProfileEvent>(key);
  if (!memo) return memo.error();
  if (*memo) return profiles_[key] = (*memo)->summary;
  // ncu runs the best kernel's library, which may have left the compile cache since it was judged.
  if (auto r = ensure_best_library(); !r) return r.error();
  auto s = profiler_->summary(best_->source, best_->evaluation);
  // A profiler failure is stated in the prompt rather than stopping the run: the loop can still
  // optimise from timings, and the LLM should know the evidence is missing.
  std::string text = s ? *s : fmt::format("(no profile this step: {})", s.error().message);
  if (!s) report("profile unavailable: " + s.error().message);
  if (auto r = journal_.record(ProfileEvent{key, text}); !r) return r.error();
  return profiles_[key] = text;
}

// --- phases ------------------------------------------------------------------------------------

Result<std::optional<Candidate>> Loop::make_correct(std::string source, const AttemptLabel& label,
                                                    const std::string& change, std::string base,
                                                    const std::string& origin, Unrepaired& failure,
                                                    std::optional<Evaluation> known_failure) {
  std::optional<Evaluation> last = std::move(known_failure);
  RepairContext context{change, {}, origin};
  std::string acted_on;  // the diagnosis behind the edit under evaluation
  for (int round = 0;; ++round) {
    if (!last) {
      AttemptLabel attempt = label;
      attempt.repair = round;
      auto e = evaluate(source, attempt, base);
      if (!e) return e.error();
      if (!acted_on.empty()) {
        StepRecord attempt{.kind = StepKind::repair, .n = round, .idea = acted_on,
                           .outcome = e->passed() ? StepOutcome::accepted : StepOutcome::incorrect};
        if (!e->passed()) attempt.verdict = e->verdict;
        attempt.note = first_line(e->reason, 100);
        context.attempts.push_back(std::move(attempt));
      }
      if (e->passed()) return std::optional<Candidate>(Candidate{source, *e});
      last = *e;
    }
    if (round >= options_.repair_budget) {
      failure = {fmt::format("{} after {} repair rounds: {}", to_string(last->verdict), round,
                             first_line(last->reason, kLine)),
                 last, false};
      return std::optional<Candidate>{};
    }
    status_.phase = LoopPhase::repair;
    auto diag_prompt = prompter_.diagnose(problem_, source, *last, context);
    if (!diag_prompt) return diag_prompt.error();
    auto diagnosis = ask<std::string>(LlmPurpose::diagnose, PromptKind::diagnose, *diag_prompt, [](const Answer& a) -> Result<std::string> {
      auto d = parse_diagnosis_answer(a.text, answer_end(a.truncated));
      if (!d) return d.error();
      return d->summary();
    });
    if (!diagnosis) return diagnosis.error();
    if (!diagnosis->value) continue;  // round spent without a diagnosis; `last` still describes `source`
    report("diagnosis: " + first_line(*diagnosis->value, kLine));

    auto repair_prompt = prompter_.repair(problem_, source, *last, *diagnosis->value, context);
    if (!repair_prompt) return repair_prompt.error();
    auto repaired = ask<std::string>(LlmPurpose::repair, PromptKind::repair, *repair_prompt, [&source](const Answer& a) -> Result<std::string> {
      auto edits = parse_edit_answer(a.text, answer_end(a.truncated));
      if (!edits) return edits.error();
      auto applied = apply_edits(source, edits->blocks);
      if (!applied) return applied.error();
      return applied->source;
    });
    if (!repaired) return repaired.error();
    if (repaired->value) {
      // Back to the kernel the change was made to: the change is what failed, and that kernel's
      // numbers are known, so it is not evaluated again.
      if (!origin.empty() && normalized(*repaired->value) == normalized(origin)) {
        failure = {fmt::format("{}; the repair undid the change", to_string(last->verdict)), last, true};
        report(fmt::format("{}: the repair only undid the change, which is recorded as a failed idea", label.text()));
        return std::optional<Candidate>{};
      }
      base = std::exchange(source, *repaired->value);
      acted_on = first_line(*diagnosis->value, 100);
      last.reset();  // evaluate the repaired kernel next round
    }
  }
}

Result<std::optional<Candidate>> Loop::synthesize(const std::vector<FailedAttempt>& failures, FailedAttempt& failure) {
  status_.phase = LoopPhase::synthesize;
  bool restart = !failures.empty();
  auto prompt = restart ? prompter_.restart(problem_, failures) : prompter_.synthesis(problem_);
  if (!prompt) return prompt.error();
  const PromptKind kind = restart ? PromptKind::restart : PromptKind::synthesis;
  auto written = ask<std::string>(restart ? LlmPurpose::restart : LlmPurpose::synthesize, kind, *prompt, [](const Answer& a) -> Result<std::string> {
    auto whole = parse_whole_file_answer(a.text, answer_end(a.truncated));
    if (!whole) return whole.error();
    return whole->source;
  });
  if (!written) return written.error();
  if (!written->value) {
    failure = {"no usable kernel in the answer: " + first_line(written->unusable, kLine), std::nullopt};
    return std::optional<Candidate>{};
  }
  Unrepaired unrepaired;
  auto made = make_correct(*written->value, AttemptLabel{restart ? AttemptStage::restart : AttemptStage::synthesis}, "",
                           "", "", unrepaired);
  if (made && !*made) failure = {unrepaired.summary, unrepaired.last};
  return made;
}

Result<Loop::Proposal> Loop::read_optimize_answer(const Answer& a, const std::string& base) const {
  auto answer = parse_optimize_answer(a.text, answer_end(a.truncated));
  if (!answer) return answer.error();
  if (answer->declined()) return Proposal{"", "", answer->decline_reason};
  if (auto r = require_notes(answer->edits->notes, {note_label::kOptimization}); !r) return r.error();
  auto applied = apply_edits(base, answer->edits->blocks);
  if (!applied) return applied.error();
  return Proposal{applied->source, first_line(answer->edits->notes.find(note_label::kOptimization)->second, 100), ""};
}

bool Loop::faster_than_best(const Evaluation& e) const {
  const Evaluation& b = best_->evaluation;
  double noise = std::max({b.noise_ms(), e.noise_ms(), options_.min_gain * b.median_ms()});
  return e.median_ms() < b.median_ms() - noise;
}

std::optional<double> Loop::keep_bar(const AttemptLabel& attempt) const {
  // Only an optimisation step's kernel is measured against a best (a first kernel, seed or restart, is kept
  // if it passes). faster_than_best needs the time below the best's less the largest of three noises; the
  // candidate's own is unknown before it is timed, so the bar leaves it out: a time not below it is not
  // below the best's less all three either, and the step is rolled back whatever other shapes would show.
  if (attempt.stage != AttemptStage::step || !best_) return std::nullopt;
  const Evaluation& b = best_->evaluation;
  const double bar = b.median_ms() - std::max(b.noise_ms(), options_.min_gain * b.median_ms());
  if (!(bar > 0)) return std::nullopt;
  return bar;
}

bool Loop::decline_hands_over_to_profile() const {
  return profiler_ && options_.profile.mode() != ProfilePolicy::Mode::never && !profile_shown_;
}

Result<std::string> Loop::begin_optimize_step(int step, int streak) {
  status_.phase = LoopPhase::optimize;
  status_.step = step;
  auto profile = profile_summary(step, streak);
  if (!profile) return profile.error();
  return prompter_.optimize(problem_, best_->source, best_->evaluation, history_, *profile, step, options_.max_steps);
}

Result<StepRecord> Loop::optimize_step(int step, int streak) {
  if (options_.candidates > 1) return optimize_with_candidates(step, streak);  // loop_candidates.cpp
  StepRecord rec{.kind = StepKind::optimization, .n = step};
  auto prompt = begin_optimize_step(step, streak);
  if (!prompt) return prompt.error();
  const std::string base = best_->source;
  auto edited = ask<Proposal>(LlmPurpose::optimize, PromptKind::optimize, *prompt,
                              [this, &base](const Answer& a) { return read_optimize_answer(a, base); });
  if (!edited) return edited.error();
  if (!edited->value) {
    rec.idea = "(no usable edit)";
    rec.outcome = StepOutcome::unusable;
    rec.note = first_line(edited->unusable, 120);
    return rec;
  }
  if (!edited->value->declined.empty()) {
    rec.outcome = StepOutcome::declined;
    rec.note = first_line(edited->value->declined, 300);
    return rec;
  }
  rec.idea = edited->value->idea;
  report(fmt::format("step {}: {}", step, rec.idea));
  Unrepaired failure;
  auto cand = make_correct(edited->value->source, AttemptLabel{.stage = AttemptStage::step, .step = step}, rec.idea,
                           best_->source, best_->source, failure);
  if (!cand) return cand.error();
  return settle_step(std::move(rec), *cand, failure);
}

Result<StepRecord> Loop::settle_step(StepRecord rec, const std::optional<Candidate>& cand, const Unrepaired& failure) {
  status_.phase = LoopPhase::optimize;
  if (!cand) {
    rec.outcome = failure.undone ? StepOutcome::undone : StepOutcome::incorrect;
    if (failure.last) {
      rec.verdict = failure.last->verdict;
      // The evidence that sank the idea, so later steps know why it failed (not only that it did).
      // The judge's evidence starts with its reason, which the note already carries.
      if (failure.undone) {
        std::string_view evidence = failure.last->evidence;
        const std::string lead = failure.last->reason + "\n";
        if (evidence.substr(0, lead.size()) == lead) evidence.remove_prefix(lead.size());
        rec.evidence = clip_utf8(evidence, 600);
      }
    }
    rec.note = failure.undone ? first_line(failure.last ? failure.last->reason : "", 120) : failure.summary;
    return rec;
  }
  const Evaluation& e = cand->evaluation;
  rec.time_ms = e.median_ms();
  rec.speedup = best_->evaluation.median_ms() / e.median_ms();
  if (faster_than_best(e)) {
    rec.outcome = StepOutcome::accepted;
    if (auto r = set_best(*cand); !r) return r.error();
  } else {
    rec.outcome = StepOutcome::slower;
    rec.note = fmt::format("needed more than the noise, {:.3g} ms",
                           std::max({best_->evaluation.noise_ms(), e.noise_ms(),
                                     options_.min_gain * best_->evaluation.median_ms()}));
  }
  return rec;
}

Status Loop::set_best(Candidate c) {
  best_ = std::move(c);
  journal_.note_best(sha256_hex(best_->source));
  status_.best_ms = best_->evaluation.median_ms();
  status_.best_speedup_eager = best_->evaluation.speedup_eager();
  status_.best_sol_pct = best_->evaluation.sol_pct();
  // While replaying, the original run already exported these bests; exporting them again would need
  // every old kernel's library still in the compile cache. Only the last one is exported, once.
  best_export_pending_ = journal_.replaying();
  return best_export_pending_ ? ok_status() : export_best();
}

Status Loop::export_best() {
  best_export_pending_ = false;
  if (!observer_.new_best || !best_) return ok_status();
  if (auto r = ensure_best_library(); !r) return r;
  return observer_.new_best(*best_);
}

Status Loop::ensure_best_library() {
  Evaluation& e = best_->evaluation;
  std::error_code ec;
  if (e.library.empty() || std::filesystem::exists(e.library, ec)) return ok_status();
  auto rebuilt = evaluator_.rebuild_library(best_->source, kKernelName);
  if (!rebuilt)
    return Error{fmt::format("the best kernel's library {} left the compile cache and cannot be rebuilt from its "
                             "logged source: {}",
                             e.library, rebuilt.error().message)};
  const std::string& judged_key = e.compile_key;
  report(fmt::format("the best kernel's library had left the compile cache: rebuilt it from the logged source{}",
                     judged_key.empty() || judged_key == rebuilt->key
                         ? ""
                         : " (with another toolchain than the one it was judged with: re-evaluate it before relying "
                           "on its time)"));
  e.library = rebuilt->path;
  return ok_status();
}

Result<LoopResult> Loop::run() {
  LoopResult result;
  if (journal_.dropped_torn_tail())
    report("the run log's last event was cut short when the run stopped: it is dropped and redone");
  auto finish = [&](std::string reason, std::string detail = "") -> Result<LoopResult> {
    status_.phase = LoopPhase::done;
    if (best_export_pending_)
      if (auto r = export_best(); !r) return r.error();
    if (auto r = decide(StopDecision{reason, detail}); !r) return r.error();
    result.best = best_;
    result.stop_reason = std::move(reason);
    result.stop_detail = std::move(detail);
    result.problem = problem_;
    result.history = history_;
    result.llm_calls = llm_calls_;
    report("stopped: " + result.stop_reason + (result.stop_detail.empty() ? "" : " (" + result.stop_detail + ")"));
    return result;
  };
  // A spent budget, or answers that keep being cut off, end the task with what it has; any other
  // error is the tool failing.
  auto stop_or_fail = [&](const Error& e) -> Result<LoopResult> {
    if (!llm_stop_.empty()) {
      report(e.message);
      return finish(llm_stop_);
    }
    return e;
  };

  auto info = describe();
  if (!info) return info.error();
  problem_ = *info;
  for (PromptKind kind : kAllPromptKinds) {
    auto system = prompter_.system_prompt(problem_, kind);
    if (!system) return system.error();
    system_prompts_[kind] = *system;
  }
  // Which example kernel the first prompts show is part of the run's record: a first kernel that
  // looks like the example is read in that light (suite results especially).
  if (!options_.seed_only) result.example_shown = prompter_.example_shown(problem_);  // no prompt shows one
  if (auto r = decide(ExampleDecision{result.example_shown}); !r) return r.error();

  if (!options_.seed_source.empty()) {
    auto seed = evaluate(options_.seed_source, AttemptLabel{AttemptStage::seed}, "");
    if (!seed) return seed.error();
    result.seed_pattern = options_.seed_pattern.empty() ? "seed" : options_.seed_pattern;
    if (seed->passed()) {
      if (seed->median_ms() > 0) result.seed_ms = seed->median_ms();
      // The best first, then the decision: a replay that ends at this decision stands on the seed.
      if (auto r = set_best(Candidate{options_.seed_source, *seed}); !r) return r.error();
      if (auto r = decide(SeedDecision{.passed = true}); !r) return r.error();
      result.started_from_seed = true;
      if (auto r = tune_best(0); !r) return stop_or_fail(r.error());  // the seed declares knobs
    } else {
      if (auto r = decide(SeedDecision{.passed = false, .verdict = seed->verdict}); !r) return r.error();
      result.failed_seed = *seed;
      if (!options_.seed_only) report("the seed kernel failed the judge: the LLM writes the first kernel");
    }
  }
  if (options_.seed_only) return finish(best_ ? "seed" : "seed_failed", options_.seed_pattern);

  std::vector<FailedAttempt> failures;
  for (int attempt = 0; attempt <= options_.max_restarts && !best_; ++attempt) {
    ++result.syntheses;
    FailedAttempt failed;
    auto c = synthesize(failures, failed);
    if (!c) return stop_or_fail(c.error());
    if (*c) {
      if (auto r = set_best(**c); !r) return r.error();
      if (auto r = decide(SynthesisDecision{.attempt = attempt + 1, .correct = true}); !r) return r.error();
      if (auto r = tune_best(0); !r) return stop_or_fail(r.error());
    } else {
      if (auto r = decide(SynthesisDecision{.attempt = attempt + 1, .correct = false, .summary = failed.summary}); !r)
        return r.error();
      report(fmt::format("synthesis attempt {} failed: {}", attempt + 1, failed.summary));
      failures.push_back(std::move(failed));
    }
  }
  if (!best_) return finish("no_correct_kernel");

  auto at_target = [&] {
    auto sol = best_->evaluation.sol_pct();
    return options_.target_sol_pct && sol && *sol >= *options_.target_sol_pct;
  };
  int streak = 0;
  for (int step = 1; step <= options_.max_steps; ++step) {
    if (at_target()) return finish("target");
    auto rec = optimize_step(step, streak);
    if (!rec) return stop_or_fail(rec.error());
    history_.push_back(*rec);
    if (auto r = decide(StepDecision{*rec}); !r) return r.error();
    report(fmt::format("step {} {}{}", step, to_string(rec->outcome), rec->note.empty() ? "" : ": " + rec->note));
    if (rec->outcome == StepOutcome::accepted)
      if (auto r = tune_best(step); !r) return stop_or_fail(r.error());
    if (rec->outcome == StepOutcome::declined) {
      // Nothing the LLM wants to try: no evaluation is spent. The one exception is evidence it has
      // not seen yet, a profile, which the next step shows before the decline is final. Not a step
      // without improvement for the plateau rule: nothing was tried.
      if (!decline_hands_over_to_profile()) return finish("declined", rec->note);
      force_profile_ = true;
      report("the LLM declined before seeing a profile: the next step shows one");
      continue;
    }
    streak = rec->outcome == StepOutcome::accepted ? 0 : streak + 1;
    if (streak >= options_.plateau_steps) return finish("plateau");
  }
  if (at_target()) return finish("target");
  return finish("steps");
}

}  // namespace cutegen

namespace cutegen {
// A step's candidates converse from loop_candidates.cpp.
template Result<Loop::Asked<Loop::Proposal>> Loop::converse<Loop::Proposal>(
    LlmPurpose, std::vector<Message>, const Caller&, const std::function<Result<Proposal>(const Answer&)>&,
    const std::function<void(const std::string&)>&) const;
}  // namespace cutegen
