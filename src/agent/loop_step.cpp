#include "agent/prompter.h"

namespace cutegen {

nlohmann::json LoopStep::to_json() const {
  nlohmann::json j = {{"step", step}, {"idea", idea}, {"outcome", outcome}, {"note", note}};
  if (time_ms) j["time_ms"] = *time_ms;
  if (speedup) j["speedup"] = *speedup;
  return j;
}

LoopStep LoopStep::from_json(const nlohmann::json& j) {
  LoopStep r;
  r.step = j.value("step", 0);
  r.idea = j.value("idea", "");
  r.outcome = j.value("outcome", "");
  r.note = j.value("note", "");
  if (j.contains("time_ms") && j["time_ms"].is_number()) r.time_ms = j["time_ms"].get<double>();
  if (j.contains("speedup") && j["speedup"].is_number()) r.speedup = j["speedup"].get<double>();
  return r;
}

}  // namespace cutegen
