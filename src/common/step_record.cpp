#include "common/step_record.h"

#include <fmt/format.h>

namespace cutegen {

std::string_view to_string(StepKind k) {
  switch (k) {
    case StepKind::optimization: return "optimization";
    case StepKind::repair: return "repair";
    case StepKind::synthesis: return "synthesis";
    case StepKind::tuning: return "tuning";
  }
  return "?";
}

std::string_view to_string(StepOutcome o) {
  switch (o) {
    case StepOutcome::accepted: return "accepted";
    case StepOutcome::slower: return "slower";
    case StepOutcome::incorrect: return "incorrect";
    case StepOutcome::undone: return "undone";
    case StepOutcome::unusable: return "unusable";
    case StepOutcome::declined: return "declined";
  }
  return "?";
}

std::string_view to_string(CandidateOutcome o) {
  switch (o) {
    case CandidateOutcome::chosen: return "chosen";
    case CandidateOutcome::lost: return "lost";
    case CandidateOutcome::failed: return "failed";
    case CandidateOutcome::unusable: return "unusable";
    case CandidateOutcome::declined: return "declined";
  }
  return "?";
}

std::optional<CandidateOutcome> parse_candidate_outcome(std::string_view word) {
  for (CandidateOutcome o : {CandidateOutcome::chosen, CandidateOutcome::lost, CandidateOutcome::failed,
                             CandidateOutcome::unusable, CandidateOutcome::declined})
    if (to_string(o) == word) return o;
  return std::nullopt;
}

nlohmann::json CandidateRecord::to_json() const {
  nlohmann::json j = {{"n", n}, {"item", item}, {"idea", idea}, {"outcome", std::string(to_string(outcome))},
                      {"note", note}};
  if (verdict) j["verdict"] = to_string(*verdict);
  if (screened_ms) j["screened_ms"] = *screened_ms;
  return j;
}

Result<CandidateRecord> CandidateRecord::from_json(const nlohmann::json& j) {
  auto bad = [&j](const char* key, const char* want) {
    return Error{fmt::format("a candidate's \"{}\" is {} where {} was expected", key,
                             j.is_object() && j.contains(key) ? j[key].type_name() : "missing", want)};
  };
  if (!j.is_object()) return Error{fmt::format("a candidate is {} where an object was expected", j.type_name())};
  CandidateRecord c;
  if (!j.contains("n") || !j["n"].is_number_integer()) return bad("n", "an integer");
  c.n = j["n"].get<int>();
  for (auto [key, out] : {std::pair{"item", &c.item}, std::pair{"idea", &c.idea}, std::pair{"note", &c.note}}) {
    if (!j.contains(key) || !j[key].is_string()) return bad(key, "a string");
    *out = j[key].get<std::string>();
  }
  if (!j.contains("outcome") || !j["outcome"].is_string()) return bad("outcome", "a string");
  auto outcome = parse_candidate_outcome(j["outcome"].get<std::string>());
  if (!outcome) return Error{fmt::format("a candidate's outcome \"{}\" is unknown", j["outcome"].get<std::string>())};
  c.outcome = *outcome;
  if (j.contains("verdict")) {
    auto v = j["verdict"].is_string() ? parse_verdict(j["verdict"].get<std::string>()) : std::nullopt;
    if (!v) return bad("verdict", "a verdict");
    c.verdict = *v;
  }
  if (j.contains("screened_ms")) {
    if (!j["screened_ms"].is_number()) return bad("screened_ms", "a number");
    c.screened_ms = j["screened_ms"].get<double>();
  }
  return c;
}

nlohmann::json StepRecord::to_json() const {
  nlohmann::json j = {{"step", n}, {"kind", std::string(to_string(kind))}, {"idea", idea},
                      {"outcome", std::string(to_string(outcome))}, {"note", note}};
  if (verdict) j["verdict"] = to_string(*verdict);
  if (time_ms) j["time_ms"] = *time_ms;
  if (speedup) j["speedup"] = *speedup;
  if (!evidence.empty()) j["evidence"] = evidence;
  if (!candidates.empty()) {
    j["candidates"] = nlohmann::json::array();
    for (const auto& c : candidates) j["candidates"].push_back(c.to_json());
  }
  return j;
}

std::optional<StepKind> parse_step_kind(std::string_view word) {
  for (StepKind k : {StepKind::optimization, StepKind::repair, StepKind::synthesis, StepKind::tuning})
    if (to_string(k) == word) return k;
  return std::nullopt;
}

std::optional<StepOutcome> parse_step_outcome(std::string_view word) {
  for (StepOutcome o : {StepOutcome::accepted, StepOutcome::slower, StepOutcome::incorrect, StepOutcome::undone,
                        StepOutcome::unusable, StepOutcome::declined})
    if (to_string(o) == word) return o;
  return std::nullopt;
}

Result<StepRecord> StepRecord::from_json(const nlohmann::json& j) {
  auto bad = [&j](const char* key, const char* want) {
    return Error{fmt::format("the step's \"{}\" is {} where {} was expected", key,
                             j.contains(key) ? j[key].type_name() : "missing", want)};
  };
  if (!j.is_object()) return Error{fmt::format("the step is {} where an object was expected", j.type_name())};
  StepRecord r;
  if (!j.contains("step") || !j["step"].is_number_integer()) return bad("step", "an integer");
  r.n = j["step"].get<int>();
  for (const char* key : {"kind", "idea", "outcome"})
    if (!j.contains(key) || !j[key].is_string()) return bad(key, "a string");
  auto kind = parse_step_kind(j["kind"].get<std::string>());
  if (!kind) return Error{fmt::format("the step's kind \"{}\" is unknown", j["kind"].get<std::string>())};
  r.kind = *kind;
  auto outcome = parse_step_outcome(j["outcome"].get<std::string>());
  if (!outcome) return Error{fmt::format("the step's outcome \"{}\" is unknown", j["outcome"].get<std::string>())};
  r.outcome = *outcome;
  r.idea = j["idea"].get<std::string>();
  for (auto [key, out] : {std::pair{"note", &r.note}, std::pair{"evidence", &r.evidence}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_string()) return bad(key, "a string");
    *out = j[key].get<std::string>();
  }
  if (j.contains("verdict")) {
    if (!j["verdict"].is_string()) return bad("verdict", "a string");
    auto v = parse_verdict(j["verdict"].get<std::string>());
    if (!v) return Error{fmt::format("the step's verdict \"{}\" is unknown", j["verdict"].get<std::string>())};
    r.verdict = *v;
  }
  for (auto [key, out] : {std::pair{"time_ms", &r.time_ms}, std::pair{"speedup", &r.speedup}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_number()) return bad(key, "a number");
    *out = j[key].get<double>();
  }
  if (j.contains("candidates")) {
    if (!j["candidates"].is_array()) return bad("candidates", "an array");
    for (const auto& c : j["candidates"]) {
      auto rec = CandidateRecord::from_json(c);
      if (!rec) return rec.error();
      r.candidates.push_back(std::move(*rec));
    }
  }
  return r;
}

}  // namespace cutegen
