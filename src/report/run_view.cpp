#include "report/run_view.h"

#include <time.h>

#include <algorithm>
#include <ctime>
#include <map>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/sha256.h"
#include "common/unified_diff.h"
#include "runlog/run_log.h"
#include "store/run_dir.h"

namespace cutegen {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The phase an LLM purpose or an evaluation belongs to.
std::string llm_phase(LlmPurpose p) {
  switch (p) {
    case LlmPurpose::synthesize:
    case LlmPurpose::restart: return "synthesis";
    case LlmPurpose::diagnose:
    case LlmPurpose::repair: return "repair";
    case LlmPurpose::optimize: return "optimisation";
  }
  return "other";
}

std::string eval_phase(const AttemptLabel& l) {
  if (l.stage == AttemptStage::tune) return "tuning";
  if (l.repair > 0) return "repair";
  if (l.stage == AttemptStage::step) return "optimisation";
  return "synthesis";
}

const std::vector<std::string>& phase_order() {
  static const std::vector<std::string> order = {"describe", "synthesis", "repair", "optimisation", "tuning",
                                                 "profiling"};
  return order;
}

// A string field, "" when absent or of another type.
std::string text_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// When the run was claimed: the marker's "created" (UTC, whole seconds), so the describe phase before
// the first event has a duration too. nullopt for runs made before the marker, or an unreadable one.
std::optional<double> run_created(const fs::path& dir) {
  auto text = read_file(dir / kRunMarkerFile);
  if (!text) return std::nullopt;
  auto j = json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("created") || !j["created"].is_string()) return std::nullopt;
  std::tm tm{};
  const std::string created = j["created"].get<std::string>();
  const char* end = ::strptime(created.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end) return std::nullopt;
  return static_cast<double>(::timegm(&tm));
}

// The loop writes steps/NNN-eval-<label>/kernel.cu, NNN counting LLM calls and evaluations in log
// order (a resumed run replays the same order, so the numbering is stable).
void attach_source(const fs::path& dir, int artifact, Attempt& a, std::vector<std::string>& notes) {
  const std::string rel = fmt::format("steps/{:03d}-eval-{}/kernel.cu", artifact, a.label);
  auto text = read_file(dir / rel);
  if (!text) {
    notes.push_back(fmt::format("attempt {} ({}): {} is missing, so its diff is not shown", a.index, a.label, rel));
    return;
  }
  a.kernel_file = rel;
  if (sha256_hex(*text) != a.source_sha256) {
    notes.push_back(fmt::format("attempt {} ({}): {} does not match the kernel the log evaluated, so it is not shown",
                                a.index, a.label, rel));
    return;
  }
  a.source = std::move(*text);
}

}  // namespace

const Attempt* RunView::attempt(int index) const {
  if (index < 1 || index > static_cast<int>(attempts.size())) return nullptr;
  return &attempts[index - 1];
}

Result<RunView> load_run_view(const fs::path& dir) {
  RunDirState state = inspect_run_dir(dir);
  switch (state.kind) {
    case RunDirKind::missing: return Error{fmt::format("{}: no such directory", dir.string())};
    case RunDirKind::not_a_directory: return Error{fmt::format("{} is not a directory: name a run directory", dir.string())};
    case RunDirKind::empty:
    case RunDirKind::other:
      return Error{fmt::format("{} is not a cutegen run (it has no {} or events.jsonl): name the --out directory of a "
                               "`cutegen optimize` run",
                               dir.string(), kRunMarkerFile)};
    case RunDirKind::cutegen_run: break;
  }
  auto log = read_run_log(dir / "events.jsonl");
  if (!log) return Error{log.error().message};
  if (log->events.empty())
    return Error{fmt::format("{} has no events: the run stopped before it described the problem, so there is "
                             "nothing to report",
                             dir.string())};
  const RunHistory history = run_history(log->events);
  if (!history.problem)
    return Error{fmt::format("{}/events.jsonl has no problem description: the run stopped before the judge described "
                             "the problem, so there is nothing to report",
                             dir.string())};

  RunView view;
  view.dir = dir.lexically_normal();  // "runs/relu/" names the run "relu", not ""
  if (view.dir.filename().empty()) view.dir = view.dir.parent_path();
  RunSummary& s = view.summary;
  std::string seed_pattern;  // config.json: what the run's seed computes, when it had one
  if (auto config = read_file(dir / "config.json")) {
    auto j = json::parse(*config, nullptr, false);
    if (j.is_object()) {
      s.llm = text_of(j, "llm");
      seed_pattern = text_of(j, "seed_pattern");
      s.profile_policy = text_of(j, "profile_from");
      view.precision = text_of(j, "precision");
    } else {
      view.notes.push_back("config.json is not a JSON object: the LLM, precision and profiling policy are unknown");
    }
  } else {
    view.notes.push_back("config.json is missing: the LLM, precision and profiling policy are unknown");
  }

  // What the run did, as its history reads it.
  const ProblemInfo& problem = *history.problem;
  view.problem = problem.facts;
  s.problem_name = problem.facts.name;
  s.workload_class = problem.facts.workload_class;
  s.baselines = problem.baselines;
  s.floor = problem.floor;
  s.example_shown = history.example_shown;
  if (history.seed_passed) s.seed_pattern = seed_pattern.empty() ? "(the seed)" : seed_pattern;
  s.failed_seed = history.failed_seed;
  s.syntheses = history.syntheses;
  if (history.stop) {
    s.stop_reason = history.stop->reason;
    s.stop_detail = history.stop->detail;
    view.finished = true;
  }
  for (const HistoryAttempt& h : history.attempts) {
    Attempt a{.index = h.index, .label = h.label.text(), .of = h.label, .step = h.label.step,
              .tuning = h.label.stage == AttemptStage::tune, .evaluation = h.evaluation, .fate = h.fate,
              .source_sha256 = h.source_sha256};
    attach_source(dir, h.artifact, a, view.notes);
    view.attempts.push_back(std::move(a));
  }
  for (const HistoryStep& h : history.steps) {
    s.history.push_back(h.record);
    view.steps.push_back(StepView{.record = h.record, .attempts = h.attempts, .base = h.base});
  }
  for (const HistoryProfile& p : history.profiles) {
    view.profiles.push_back({.first_step = p.first_step, .kernel = p.kernel, .summary = p.summary});
    if (!view.first_profiled_step) view.first_profiled_step = p.first_step;
  }
  view.best_attempt = history.best;
  if (const HistoryAttempt* b = history.best_attempt()) s.best = b->evaluation;

  // Costs and times per phase: each LLM answer's usage, and the wall time between events, given to
  // the event that ended it.
  std::map<std::string, PhaseCost> phases;
  for (const auto& p : phase_order()) phases[p].phase = p;
  std::string last_phase = "describe";
  std::optional<double> first_t, prev_t;
  // The marker is written when the run claims its directory, before the judge describes the problem;
  // a resumed run keeps its first marker, so only a time before the first event is believed.
  if (auto created = run_created(dir); created && log->events.front().t && *created <= *log->events.front().t)
    first_t = prev_t = created;
  for (const LoggedEvent& logged : log->events) {
    const std::optional<double>& t = logged.t;
    double gap = t && prev_t ? std::max(0.0, *t - *prev_t) : 0;
    if (t) {
      if (!first_t) first_t = t;
      prev_t = t;
    }
    std::string phase = last_phase;
    if (std::holds_alternative<ProblemEvent>(logged.event)) {
      phase = "describe";
    } else if (const auto* l = std::get_if<LlmEvent>(&logged.event)) {
      phase = llm_phase(l->purpose);
      PhaseCost& pc = phases[phase];
      const Usage& u = l->response.usage;
      ++pc.llm_calls;
      ++s.llm_calls;
      pc.tokens += u.total();
      pc.cost_usd += l->cost_usd;
      pc.llm_seconds += l->response.latency_s;
      s.tokens += u.total();
      s.input_tokens += u.input_tokens;
      s.cached_input_tokens += u.cached_input_tokens;
      s.cost_usd += l->cost_usd;
    } else if (const auto* e = std::get_if<EvalEvent>(&logged.event)) {
      phase = eval_phase(e->label);
      ++phases[phase].evaluations;
    } else if (const auto* tune = std::get_if<TuneEvent>(&logged.event)) {
      phase = "tuning";
      phases[phase].evaluations += tune->variants_screened() + (tune->evaluation ? 1 : 0);
    } else if (std::holds_alternative<ProfileEvent>(logged.event)) {
      phase = "profiling";
    }
    phases[phase].seconds += gap;
    last_phase = phase;
  }
  if (first_t && prev_t) view.wall_seconds = *prev_t - *first_t;

  // Each step's change against the kernel it started from.
  for (auto& step : view.steps) {
    if (step.attempts.empty() || !step.base) continue;
    const Attempt& before = view.attempts[*step.base - 1];
    const Attempt& after = view.attempts[step.attempts.back() - 1];
    if (!before.source || !after.source) {
      step.diff_missing = "a kernel file is missing from steps/ (see the notes)";
      continue;
    }
    auto d = unified_diff(*before.source, *after.source,
                          {.before_label = fmt::format("a/kernel.cu ({})", before.label),
                           .after_label = fmt::format("b/kernel.cu ({})", after.label)});
    step.diff = d.text;
    step.lines_added = d.lines_added;
    step.lines_removed = d.lines_removed;
  }
  for (const auto& p : phase_order()) view.phases.push_back(phases[p]);
  for (auto& [name, pc] : phases)
    if (std::find(phase_order().begin(), phase_order().end(), name) == phase_order().end()) view.phases.push_back(pc);
  return view;
}

}  // namespace cutegen
