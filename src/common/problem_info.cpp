#include "common/problem_info.h"

#include <fmt/format.h>

namespace cutegen {

std::string ProblemInfo::timing_summary() const {
  if (seconds <= 0) return "";
  std::string parts;
  for (const char* phase : {"load", "baselines", "roofline"}) {
    auto it = phase_seconds.find(phase);
    if (it == phase_seconds.end()) continue;
    parts += fmt::format("{}{} {:.1f}", parts.empty() ? "" : ", ", phase, it->second);
    if (std::string_view(phase) == "baselines" && !baselines.seconds.empty()) {
      std::string modes;
      for (const auto& [mode, s] : baselines.seconds) modes += fmt::format("{}{} {:.1f}", modes.empty() ? "" : ", ", mode, s);
      parts += " (" + modes + ")";
    }
  }
  return fmt::format("described in {:.1f} s{}{}", seconds, parts.empty() ? "" : ": ", parts);
}

nlohmann::json ProblemInfo::to_json() const {
  nlohmann::json j = {{"source", source}, {"facts", facts.to_json()}, {"baselines", baselines.to_json()}};
  if (floor) j["roofline"] = floor->to_json();
  if (seconds > 0) j["seconds"] = seconds;
  if (!phase_seconds.empty()) j["phase_seconds"] = phase_seconds;
  return j;
}

Result<ProblemInfo> ProblemInfo::from_json(const nlohmann::json& j) {
  auto malformed = [](const std::string& why) {
    return Error{fmt::format("recorded problem description is malformed: {}", why)};
  };
  if (!j.is_object()) return malformed("not an object");
  ProblemInfo p;
  if (!j.contains("source") || !j["source"].is_string()) return malformed("no \"source\" text");
  p.source = j["source"].get<std::string>();
  auto facts = ProblemFacts::from_json(j.value("facts", nlohmann::json()));
  if (!facts) return malformed(facts.error().message);
  p.facts = std::move(*facts);
  auto baselines = Baselines::from_json(j.value("baselines", nlohmann::json()));
  if (!baselines) return malformed(baselines.error().message);
  p.baselines = std::move(*baselines);
  if (j.contains("roofline")) {
    auto floor = Floor::from_json(j["roofline"]);
    if (!floor) return malformed(floor.error().message);
    p.floor = *floor;
  }
  // The time it took (absent from descriptions recorded before 2026-12-06).
  if (j.contains("seconds")) {
    if (!j["seconds"].is_number()) return malformed("\"seconds\" is not a number");
    p.seconds = j["seconds"].get<double>();
  }
  if (j.contains("phase_seconds")) {
    auto phases = seconds_by_name(j["phase_seconds"], "phase_seconds");
    if (!phases) return malformed(phases.error().message);
    p.phase_seconds = std::move(*phases);
  }
  return p;
}

}  // namespace cutegen
