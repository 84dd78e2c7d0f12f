#include "report/run_view.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/sha256.h"
#include "common/unified_diff.h"
#include "store/event_log.h"
#include "store/run_dir.h"

namespace cutegen {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The phase an LLM purpose or an evaluation label belongs to.
std::string llm_phase(const std::string& what) {
  if (what == "synthesize" || what == "restart") return "synthesis";
  if (what == "diagnose" || what == "repair") return "repair";
  if (what == "optimize") return "optimisation";
  return what.empty() ? "other" : what;
}

std::string eval_phase(const std::string& label) {
  if (label.rfind("tune", 0) == 0) return "tuning";
  if (label.find("-repair") != std::string::npos) return "repair";
  if (label.rfind("step", 0) == 0) return "optimisation";
  return "synthesis";
}

// "step12-repair1" -> 12; 0 for synthesis and restarts.
int step_of(const std::string& label) {
  if (label.rfind("step", 0) != 0) return 0;
  int n = 0;
  for (std::size_t i = 4; i < label.size() && label[i] >= '0' && label[i] <= '9'; ++i) n = n * 10 + (label[i] - '0');
  return n;
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

class Reader {
 public:
  Reader(fs::path dir, const LoadedLog& log) : dir_(std::move(dir)), log_(log) {}

  Error bad(std::size_t i, const std::string& why) const {
    return Error{fmt::format("{}:{}: the logged {} event cannot be read ({}); the log is damaged or was edited",
                             (dir_ / "events.jsonl").string(), log_.lines.at(i), log_.events.at(i).value("type", "?"),
                             why)};
  }
  Result<const json*> field(std::size_t i, const char* key, json::value_t kind) const {
    const json& e = log_.events.at(i);
    auto it = e.find(key);
    if (it == e.end() || it->type() != kind) {
      json want(kind);
      return bad(i, fmt::format("its \"{}\" is {} where {} was expected", key,
                                it == e.end() ? "missing" : it->type_name(), want.type_name()));
    }
    return &*it;
  }
  std::string text(std::size_t i, const char* key) const { return text_of(log_.events.at(i), key); }
  // A number in event i's `obj` (the event itself or a part of it); `fallback` when absent.
  Result<double> number(std::size_t i, const json& obj, const char* key, double fallback = 0) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_number()) return bad(i, fmt::format("its \"{}\" is {} where a number was expected", key, it->type_name()));
    return it->get<double>();
  }

 private:
  fs::path dir_;
  const LoadedLog& log_;
};

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

std::string_view to_string(AttemptFate f) {
  switch (f) {
    case AttemptFate::accepted: return "accepted";
    case AttemptFate::rolled_back: return "rolled back";
    case AttemptFate::failed: return "failed";
  }
  return "?";
}

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
  auto loaded = load_event_log(dir / "events.jsonl");
  if (!loaded) return loaded.error();
  const LoadedLog& log = *loaded;
  if (log.events.empty())
    return Error{fmt::format("{} has no events: the run stopped before it described the problem, so there is "
                             "nothing to report",
                             dir.string())};
  for (std::size_t i = 0; i < log.events.size(); ++i) {
    const json& v = log.events[i].value("v", json(1));
    if (v != kRunViewLogFormat)
      return Error{fmt::format("{}:{} was written by another cutegen (run log format {}; this one reads format {}): "
                               "report it with the cutegen that made it (its config.json names the version)",
                               (dir / "events.jsonl").string(), log.lines[i], v.dump(), kRunViewLogFormat)};
  }

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

  Reader r(dir, log);
  std::map<std::string, PhaseCost> phases;
  for (const auto& p : phase_order()) phases[p].phase = p;
  std::string last_phase = "describe";
  std::optional<double> first_t, prev_t;
  // The marker is written when the run claims its directory, before the judge describes the problem;
  // a resumed run keeps its first marker, so only a time before the first event is believed.
  if (auto created = run_created(dir); created && !log.events.empty()) {
    const json& t0 = log.events.front().value("t", json());
    if (t0.is_number() && *created <= t0.get<double>()) first_t = prev_t = created;
  }
  int artifact = 0;
  std::optional<int> best;
  std::vector<int> ever_best;  // every attempt that was the best kernel at some point
  // Profiles are logged just before the optimise prompt that carries them; the next step decision
  // names the step.
  std::vector<std::size_t> pending_profiles;

  for (std::size_t i = 0; i < log.events.size(); ++i) {
    const json& e = log.events[i];
    const std::string type = e.value("type", "");
    const std::string key = r.text(i, "key");
    std::optional<double> t;
    if (auto it = e.find("t"); it != e.end() && it->is_number()) t = it->get<double>();
    double gap = t && prev_t ? std::max(0.0, *t - *prev_t) : 0;
    if (t) {
      if (!first_t) first_t = t;
      prev_t = t;
    }
    std::string phase = last_phase;

    if (type == "problem") {
      auto p = r.field(i, "problem", json::value_t::object);
      if (!p) return p.error();
      const json& pj = **p;
      auto facts = ProblemFacts::from_json(pj.value("facts", json()));
      if (!facts) return r.bad(i, facts.error().message);
      auto baselines = Baselines::from_json(pj.value("baselines", json::object()));
      if (!baselines) return r.bad(i, baselines.error().message);
      view.problem = *facts;
      s.problem_name = facts->name;
      s.workload_class = facts->workload_class;
      s.baselines = *baselines;
      if (pj.contains("roofline")) {
        auto floor = Floor::from_json(pj["roofline"]);
        if (!floor) return r.bad(i, floor.error().message);
        s.floor = *floor;
      }
      phase = "describe";
    } else if (type == "llm") {
      auto resp = r.field(i, "response", json::value_t::object);
      if (!resp) return resp.error();
      phase = llm_phase(r.text(i, "what"));
      PhaseCost& pc = phases[phase];
      pc.phase = phase;
      ++pc.llm_calls;
      ++s.llm_calls;
      const json& response = **resp;
      const json no_usage = json::object();
      const json& usage = response.contains("usage") && response["usage"].is_object() ? response["usage"] : no_usage;
      auto input = r.number(i, usage, "input_tokens");
      auto output = r.number(i, usage, "output_tokens");
      // Logs written before prompt caching was reported have no cached count: none was cached then.
      double cached = 0;
      if (usage.contains("cached_input_tokens")) {
        auto c = r.number(i, usage, "cached_input_tokens");
        if (!c) return c.error();
        cached = *c;
      }
      auto cost = r.number(i, e, "cost_usd");
      auto latency = r.number(i, response, "latency_s");
      for (const auto* n : {&input, &output, &cost, &latency})
        if (!*n) return n->error();
      const long long tokens = static_cast<long long>(*input) + static_cast<long long>(*output);
      pc.tokens += tokens;
      pc.cost_usd += *cost;
      pc.llm_seconds += *latency;
      s.tokens += tokens;
      s.input_tokens += static_cast<long long>(*input);
      s.cached_input_tokens += static_cast<long long>(cached);
      s.cost_usd += *cost;
      ++artifact;
    } else if (type == "eval") {
      auto ev = r.field(i, "evaluation", json::value_t::object);
      if (!ev) return ev.error();
      auto evaluation = Evaluation::from_json(**ev);
      if (!evaluation) return r.bad(i, evaluation.error().message);
      ++artifact;
      Attempt a;
      a.index = static_cast<int>(view.attempts.size()) + 1;
      a.label = r.text(i, "what");
      a.step = step_of(a.label);
      a.evaluation = std::move(*evaluation);
      a.source_sha256 = key;
      a.fate = a.evaluation.passed() ? AttemptFate::accepted : AttemptFate::failed;  // steps: settled by their decision
      attach_source(dir, artifact, a, view.notes);
      phase = eval_phase(a.label);
      ++phases[phase].evaluations;
      view.attempts.push_back(std::move(a));
    } else if (type == "tune") {
      // A tuning of the best kernel's knobs (agent/loop_tune.cpp): its chosen kernel, when it was
      // judged in full, is an attempt; the `tune<N>` decision after it says whether it was kept.
      auto tune = r.field(i, "tune", json::value_t::object);
      if (!tune) return tune.error();
      ++artifact;
      phase = "tuning";
      const json& tj = **tune;
      const json& table = tj.contains("table") && tj["table"].is_object() ? tj["table"] : json::object();
      for (const auto& row : table.value("variants", json::array()))
        if (row.is_object() && row.contains("verdict")) ++phases[phase].evaluations;
      if (tj.contains("evaluation") && !tj["evaluation"].is_null()) {
        auto evaluation = Evaluation::from_json(tj["evaluation"]);
        if (!evaluation) return r.bad(i, evaluation.error().message);
        Attempt a;
        a.index = static_cast<int>(view.attempts.size()) + 1;
        a.label = r.text(i, "what");
        a.tuning = true;
        a.step = a.label.size() > 4 ? std::atoi(a.label.c_str() + 4) : 0;  // "tune3" follows step 3
        a.evaluation = std::move(*evaluation);
        a.source_sha256 = sha256_hex(text_of(tj, "source"));
        a.fate = AttemptFate::rolled_back;  // settled by the tune decision
        attach_source(dir, artifact, a, view.notes);
        ++phases[phase].evaluations;
        view.attempts.push_back(std::move(a));
      }
    } else if (type == "profile") {
      if (auto sum = r.field(i, "summary", json::value_t::string); !sum) return sum.error();
      pending_profiles.push_back(i);
      phase = "profiling";
    } else if (type == "decision") {
      if (key == "example") {
        s.example_shown = r.text(i, "file");
      } else if (key == "seed") {
        // --start seed: the seed is the first best kernel when it passed (docs/seed.md).
        if (r.text(i, "outcome") == "correct" && !view.attempts.empty() && view.attempts.back().evaluation.passed()) {
          best = view.attempts.back().index;
          ever_best.push_back(*best);
          s.seed_pattern = seed_pattern.empty() ? "(the seed)" : seed_pattern;
        }
        // The seed's evaluation is the one just before its decision: how it failed, for the stop line.
        if (r.text(i, "outcome") == "failed" && !view.attempts.empty() && view.attempts.back().label == "seed" &&
            !view.attempts.back().evaluation.passed())
          s.failed_seed = view.attempts.back().evaluation;
      } else if (key.rfind("synthesis", 0) == 0) {
        ++s.syntheses;
        if (r.text(i, "outcome") == "correct" && !view.attempts.empty() && view.attempts.back().evaluation.passed()) {
          best = view.attempts.back().index;
          ever_best.push_back(*best);
        }
      } else if (key.rfind("step", 0) == 0) {
        auto rec = StepRecord::from_json(e);
        if (!rec) return r.bad(i, rec.error().message);
        StepView step{.record = *rec, .base = best};
        for (auto& a : view.attempts)
          if (a.step == rec->n && a.label.rfind("step", 0) == 0) step.attempts.push_back(a.index);
        if (!step.attempts.empty()) {
          Attempt& last = view.attempts[step.attempts.back() - 1];
          if (rec->outcome == StepOutcome::slower && last.evaluation.passed()) last.fate = AttemptFate::rolled_back;
          if (rec->outcome == StepOutcome::accepted && last.evaluation.passed()) best = last.index;
        }
        for (std::size_t p : pending_profiles) {
          ProfileShown shown{.first_step = rec->n, .kernel = step.base, .summary = r.text(p, "summary")};
          view.profiles.push_back(std::move(shown));
          if (!view.first_profiled_step) view.first_profiled_step = rec->n;
        }
        pending_profiles.clear();
        s.history.push_back(*rec);
        view.steps.push_back(std::move(step));
      } else if (key.rfind("tune", 0) == 0) {
        auto rec = StepRecord::from_json(e);
        if (!rec) return r.bad(i, rec.error().message);
        StepView step{.record = *rec, .base = best};
        if (!view.attempts.empty() && view.attempts.back().label == key) {
          Attempt& tuned = view.attempts.back();
          step.attempts.push_back(tuned.index);
          if (rec->outcome == StepOutcome::accepted && tuned.evaluation.passed()) {
            tuned.fate = AttemptFate::accepted;
            best = tuned.index;
            ever_best.push_back(*best);
          }
        }
        s.history.push_back(*rec);
        view.steps.push_back(std::move(step));
      } else if (key == "stop") {
        s.stop_reason = r.text(i, "reason");
        s.stop_detail = r.text(i, "detail");
        view.finished = true;
      }
    }
    phases[phase].seconds += gap;
    last_phase = phase;
  }
  if (!view.problem)
    return Error{fmt::format("{}/events.jsonl has no problem description: the run stopped before the judge described "
                             "the problem, so there is nothing to report",
                             dir.string())};
  if (first_t && prev_t) view.wall_seconds = *prev_t - *first_t;
  // A synthesis attempt that passed but whose decision is not logged (the run was cut short) never
  // became the best; every failing evaluation stays `failed`.
  for (auto& a : view.attempts)
    if (a.step == 0 && !a.tuning && a.evaluation.passed() &&
        std::find(ever_best.begin(), ever_best.end(), a.index) == ever_best.end())
      a.fate = AttemptFate::rolled_back;
  for (auto& step : view.steps)
    for (int idx : step.attempts)
      if (idx != step.attempts.back() && view.attempts[idx - 1].evaluation.passed())
        view.attempts[idx - 1].fate = AttemptFate::rolled_back;
  view.best_attempt = best;
  if (best) s.best = view.attempts[*best - 1].evaluation;

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
