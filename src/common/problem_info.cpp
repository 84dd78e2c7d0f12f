#include "common/problem_info.h"

#include <fmt/format.h>

namespace cutegen {

nlohmann::json ProblemInfo::to_json() const {
  nlohmann::json j = {{"source", source}, {"facts", facts.to_json()}, {"baselines", baselines.to_json()}};
  if (floor) j["roofline"] = floor->to_json();
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
  return p;
}

}  // namespace cutegen
