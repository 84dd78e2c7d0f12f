#include "runlog/run_events.h"

#include <fmt/format.h>

namespace cutegen {
namespace {
using json = nlohmann::json;

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// Field readers: an Error names the field and what it holds.
Error wrong(const json& j, const char* key, const char* want) {
  return Error{fmt::format("its \"{}\" is {} where {} was expected", key,
                           j.contains(key) ? j[key].type_name() : "missing", want)};
}
Result<std::string> text(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_string()) return wrong(j, key, "a string");
  return j[key].get<std::string>();
}
std::string optional_text(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}
Result<int> integer(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_integer()) return wrong(j, key, "an integer");
  return j[key].get<int>();
}
Result<const json*> object(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_object()) return wrong(j, key, "an object");
  return &j[key];
}

json attempt_json(const AttemptLabel& l) {
  return {{"stage", std::string(to_string(l.stage))}, {"step", l.step}, {"candidate", l.candidate}, {"repair", l.repair}};
}

Result<AttemptLabel> attempt_from_json(const json& j) {
  auto stage_word = text(j, "stage");
  if (!stage_word) return stage_word.error();
  auto stage = parse_attempt_stage(*stage_word);
  if (!stage) return Error{fmt::format("its attempt stage \"{}\" is unknown", *stage_word)};
  AttemptLabel l{.stage = *stage};
  for (auto [key, out] : {std::pair{"step", &l.step}, std::pair{"candidate", &l.candidate}, std::pair{"repair", &l.repair}}) {
    auto n = integer(j, key);
    if (!n) return n.error();
    *out = *n;
  }
  return l;
}

// Format 2 named an evaluation only by its label text ("what").
Result<AttemptLabel> label_of(const json& j, int format) {
  if (format >= 3) {
    auto a = object(j, "attempt");
    if (!a) return a.error();
    return attempt_from_json(**a);
  }
  auto what = text(j, "what");
  if (!what) return what.error();
  auto l = AttemptLabel::parse(*what);
  if (!l) return Error{fmt::format("its label \"{}\" is not one the loop writes", *what)};
  return *l;
}

Result<Evaluation> evaluation_of(const json& j) {
  auto e = Evaluation::from_json(j);
  if (!e) return Error{"its evaluation does not read back: " + e.error().message};
  return e;
}

Result<RunEvent> decision_from_json(const json& j, int format) {
  auto key = text(j, "key");
  if (!key) return key.error();
  std::string kind;
  int attempt = 0;
  if (format >= 3) {
    auto k = text(j, "decision");
    if (!k) return k.error();
    kind = *k;
    if (kind == "synthesis") {
      auto a = integer(j, "attempt");
      if (!a) return a.error();
      attempt = *a;
    }
  } else if (*key == "example" || *key == "seed" || *key == "stop") {
    kind = *key;
  } else if (key->rfind("synthesis", 0) == 0) {  // format 2: the attempt only in the key, "synthesis2"
    kind = "synthesis";
    attempt = std::atoi(key->c_str() + 9);
    if (attempt < 1) return Error{fmt::format("its key \"{}\" names no synthesis attempt", *key)};
  } else {
    kind = "step";  // step<n> and tune<n>: the record's own kind and step say which
  }
  if (kind == "example") return RunEvent{ExampleDecision{optional_text(j, "file")}};
  if (kind == "stop") {
    auto reason = text(j, "reason");
    if (!reason) return reason.error();
    return RunEvent{StopDecision{*reason, optional_text(j, "detail")}};
  }
  if (kind == "seed" || kind == "synthesis") {
    auto outcome = text(j, "outcome");
    if (!outcome) return outcome.error();
    if (*outcome != "correct" && *outcome != "failed")
      return Error{fmt::format("its outcome \"{}\" is neither correct nor failed", *outcome)};
    const bool passed = *outcome == "correct";
    if (kind == "synthesis") return RunEvent{SynthesisDecision{attempt, passed, optional_text(j, "summary")}};
    SeedDecision d{.passed = passed};
    if (auto v = optional_text(j, "verdict"); !v.empty()) {
      d.verdict = parse_verdict(v);
      if (!d.verdict) return Error{fmt::format("its verdict \"{}\" is unknown", v)};
    }
    return RunEvent{d};
  }
  if (kind != "step") return Error{fmt::format("its decision \"{}\" is unknown", kind)};
  auto rec = StepRecord::from_json(j);
  if (!rec) return rec.error();
  StepDecision d{*rec};
  if (event_key(RunEvent{d}) != *key)
    return Error{fmt::format("its key \"{}\" does not name its step ({} {})", *key, to_string(rec->kind), rec->n)};
  return RunEvent{std::move(d)};
}

}  // namespace

std::string_view to_string(LlmPurpose p) {
  switch (p) {
    case LlmPurpose::synthesize: return "synthesize";
    case LlmPurpose::restart: return "restart";
    case LlmPurpose::diagnose: return "diagnose";
    case LlmPurpose::repair: return "repair";
    case LlmPurpose::optimize: return "optimize";
  }
  return "?";
}

std::optional<LlmPurpose> parse_llm_purpose(std::string_view word) {
  for (LlmPurpose p : {LlmPurpose::synthesize, LlmPurpose::restart, LlmPurpose::diagnose, LlmPurpose::repair,
                       LlmPurpose::optimize})
    if (to_string(p) == word) return p;
  return std::nullopt;
}

int TuneEvent::variants_screened() const {
  int n = 0;
  if (table.is_object() && table.contains("variants") && table["variants"].is_array())
    for (const auto& row : table["variants"])
      if (row.is_object() && row.contains("verdict")) ++n;
  return n;
}

EventKind kind_of(const RunEvent& e) {
  return std::visit(Overloaded{[](const ProblemEvent&) { return EventKind::problem; },
                               [](const LlmEvent&) { return EventKind::llm; },
                               [](const EvalEvent&) { return EventKind::eval; },
                               [](const TuneEvent&) { return EventKind::tune; },
                               [](const ProfileEvent&) { return EventKind::profile; },
                               [](const CompileEvent&) { return EventKind::compile; },
                               [](const ScreenEvent&) { return EventKind::screen; },
                               [](const auto&) { return EventKind::decision; }},
                    e);
}

std::string_view to_string(EventKind k) {
  switch (k) {
    case EventKind::problem: return "problem";
    case EventKind::llm: return "llm";
    case EventKind::eval: return "eval";
    case EventKind::tune: return "tune";
    case EventKind::profile: return "profile";
    case EventKind::compile: return "compile";
    case EventKind::screen: return "screen";
    case EventKind::decision: return "decision";
  }
  return "?";
}

std::string event_key(const RunEvent& e) {
  return std::visit(
      Overloaded{[](const ProblemEvent& p) { return p.key; }, [](const LlmEvent& l) { return l.key; },
                 [](const EvalEvent& v) { return v.key; }, [](const TuneEvent& t) { return t.key; },
                 [](const ProfileEvent& p) { return p.key; }, [](const CompileEvent& c) { return c.key; },
                 [](const ScreenEvent& s) { return s.key; },
                 [](const ExampleDecision&) { return std::string("example"); },
                 [](const SeedDecision&) { return std::string("seed"); },
                 [](const SynthesisDecision& s) { return fmt::format("synthesis{}", s.attempt); },
                 [](const StepDecision& s) {
                   return fmt::format("{}{}", s.record.kind == StepKind::tuning ? "tune" : "step", s.record.n);
                 },
                 [](const StopDecision&) { return std::string("stop"); }},
      e);
}

std::string decision_outcome(const RunEvent& e) {
  return std::visit(Overloaded{[](const SeedDecision& s) { return std::string(s.passed ? "correct" : "failed"); },
                               [](const SynthesisDecision& s) { return std::string(s.correct ? "correct" : "failed"); },
                               [](const StepDecision& s) { return std::string(to_string(s.record.outcome)); },
                               [](const StopDecision& s) { return s.reason; },
                               [](const auto&) { return std::string(); }},
                    e);
}

std::string describe(const RunEvent& e) {
  std::string s = fmt::format("{} {}", to_string(kind_of(e)), event_key(e).substr(0, 12));
  std::visit(Overloaded{[&](const LlmEvent& l) { s += fmt::format(" ({})", to_string(l.purpose)); },
                        [&](const EvalEvent& v) { s += fmt::format(" ({})", v.label.text()); },
                        [&](const TuneEvent& t) { s += fmt::format(" (tune{})", t.after_step); },
                        [&](const CompileEvent& c) { s += fmt::format(" ({})", c.label.text()); },
                        [&](const ScreenEvent& v) { s += fmt::format(" ({})", v.label.text()); },
                        [](const auto&) {}},
             e);
  if (auto outcome = decision_outcome(e); !outcome.empty()) s += " " + outcome;
  return s;
}

json to_json(const RunEvent& e) {
  json j = std::visit(
      Overloaded{
          [](const ProblemEvent& p) { return json{{"problem", p.problem.to_json()}}; },
          [](const LlmEvent& l) {
            json j = {{"what", std::string(to_string(l.purpose))}, {"response", to_json(l.response)},
                      {"cost_usd", l.cost_usd}, {"capped_by_budget", l.capped_by_budget}};
            if (l.candidate > 0) j["candidate"] = l.candidate;
            if (l.max_tokens) j["max_tokens"] = *l.max_tokens;
            return j;
          },
          [](const EvalEvent& v) {
            return json{{"what", v.label.text()}, {"attempt", attempt_json(v.label)}, {"evaluation", v.evaluation.to_json()}};
          },
          [](const TuneEvent& t) {
            json tune = {{"summary", t.summary}, {"markdown", t.markdown}, {"source", t.source},
                         {"default_kept", t.default_kept}, {"table", t.table},
                         {"evaluation", t.evaluation ? t.evaluation->to_json() : json()}};
            return json{{"what", fmt::format("tune{}", t.after_step)}, {"after_step", t.after_step}, {"tune", tune}};
          },
          [](const ProfileEvent& p) { return json{{"summary", p.summary}}; },
          [](const CompileEvent& c) {
            return json{{"what", c.label.text()}, {"attempt", attempt_json(c.label)},
                        {"failure", c.failure ? c.failure->to_json() : json()}};
          },
          [](const ScreenEvent& v) {
            return json{{"what", v.label.text()}, {"attempt", attempt_json(v.label)}, {"evaluation", v.evaluation.to_json()}};
          },
          [](const ExampleDecision& d) { return json{{"decision", "example"}, {"file", d.file}}; },
          [](const SeedDecision& d) {
            json j = {{"decision", "seed"}, {"outcome", d.passed ? "correct" : "failed"}};
            if (d.verdict) j["verdict"] = to_string(*d.verdict);
            return j;
          },
          [](const SynthesisDecision& d) {
            json j = {{"decision", "synthesis"}, {"attempt", d.attempt}, {"outcome", d.correct ? "correct" : "failed"}};
            if (!d.correct) j["summary"] = d.summary;
            return j;
          },
          [](const StepDecision& d) {
            json j = d.record.to_json();
            j["decision"] = "step";
            return j;
          },
          [](const StopDecision& d) {
            json j = {{"decision", "stop"}, {"reason", d.reason}};
            if (!d.detail.empty()) j["detail"] = d.detail;
            return j;
          }},
      e);
  j["type"] = std::string(to_string(kind_of(e)));
  j["key"] = event_key(e);
  return j;
}

Result<RunEvent> run_event_from_json(const json& j, int format) {
  if (format < kOldestRunLogFormat || format > kRunLogFormat)
    return Error{fmt::format("run log format {} is not one this cutegen reads ({} to {})", format, kOldestRunLogFormat,
                             kRunLogFormat)};
  if (!j.is_object()) return Error{fmt::format("the event is {} where an object was expected", j.type_name())};
  auto type = text(j, "type");
  if (!type) return type.error();
  if (*type == "decision") return decision_from_json(j, format);
  auto key = text(j, "key");
  if (!key) return key.error();
  if (*type == "problem") {
    auto p = object(j, "problem");
    if (!p) return p.error();
    auto info = ProblemInfo::from_json(**p);
    if (!info) return info.error();
    return RunEvent{ProblemEvent{*key, std::move(*info)}};
  }
  if (*type == "llm") {
    LlmEvent l{.key = *key};
    auto what = text(j, "what");
    if (!what) return what.error();
    auto purpose = parse_llm_purpose(*what);
    if (!purpose) return Error{fmt::format("its purpose \"{}\" is unknown", *what)};
    l.purpose = *purpose;
    auto resp = object(j, "response");
    if (!resp) return resp.error();
    auto r = response_from_json(**resp);
    if (!r) return Error{"its response does not read back: " + r.error().message};
    l.response = std::move(*r);
    if (j.contains("cost_usd")) {
      if (!j["cost_usd"].is_number()) return wrong(j, "cost_usd", "a number");
      l.cost_usd = j["cost_usd"].get<double>();
    }
    if (j.contains("capped_by_budget")) {
      if (!j["capped_by_budget"].is_boolean()) return wrong(j, "capped_by_budget", "true or false");
      l.capped_by_budget = j["capped_by_budget"].get<bool>();
    }
    if (j.contains("max_tokens")) {
      auto m = integer(j, "max_tokens");
      if (!m) return m.error();
      l.max_tokens = *m;
    }
    if (j.contains("candidate")) {
      auto c = integer(j, "candidate");
      if (!c) return c.error();
      l.candidate = *c;
    }
    return RunEvent{std::move(l)};
  }
  if (*type == "eval") {
    auto label = label_of(j, format);
    if (!label) return label.error();
    auto ev = object(j, "evaluation");
    if (!ev) return ev.error();
    auto e = evaluation_of(**ev);
    if (!e) return e.error();
    return RunEvent{EvalEvent{*key, *label, std::move(*e)}};
  }
  if (*type == "tune") {
    TuneEvent t{.key = *key};
    if (format >= 3) {
      auto after = integer(j, "after_step");
      if (!after) return after.error();
      t.after_step = *after;
    } else {  // format 2: "tune3" follows step 3
      auto l = label_of(j, format);
      if (!l || l->stage != AttemptStage::tune) return Error{"its \"what\" does not name a tuning (tune<step>)"};
      t.after_step = l->step;
    }
    auto tj = object(j, "tune");
    if (!tj) return tj.error();
    const json& o = **tj;
    for (auto [k, out] : {std::pair{"summary", &t.summary}, std::pair{"markdown", &t.markdown}, std::pair{"source", &t.source}}) {
      auto s = text(o, k);
      if (!s) return s.error();
      *out = *s;
    }
    if (!o.contains("default_kept") || !o["default_kept"].is_boolean()) return wrong(o, "default_kept", "true or false");
    t.default_kept = o["default_kept"].get<bool>();
    auto table = object(o, "table");
    if (!table) return table.error();
    t.table = **table;
    if (o.contains("evaluation") && !o["evaluation"].is_null()) {
      auto e = evaluation_of(o["evaluation"]);
      if (!e) return e.error();
      t.evaluation = std::move(*e);
    }
    return RunEvent{std::move(t)};
  }
  if ((*type == "compile" || *type == "screen") && format >= 3) {
    auto label = label_of(j, format);
    if (!label) return label.error();
    if (*type == "screen") {
      auto ev = object(j, "evaluation");
      if (!ev) return ev.error();
      auto e = evaluation_of(**ev);
      if (!e) return e.error();
      return RunEvent{ScreenEvent{*key, *label, std::move(*e)}};
    }
    CompileEvent c{*key, *label, std::nullopt};
    if (!j.contains("failure")) return wrong(j, "failure", "an object or null");
    if (!j["failure"].is_null()) {
      auto e = evaluation_of(j["failure"]);
      if (!e) return e.error();
      c.failure = std::move(*e);
    }
    return RunEvent{std::move(c)};
  }
  if (*type == "profile") {
    auto s = text(j, "summary");
    if (!s) return s.error();
    return RunEvent{ProfileEvent{*key, *s}};
  }
  return Error{fmt::format("its type \"{}\" is unknown", *type)};
}

}  // namespace cutegen
