#include "agent/prompter.h"

namespace cutegen {

nlohmann::json StepRecord::to_json() const {
  nlohmann::json j = {{"step", step}, {"idea", idea}, {"outcome", outcome}, {"note", note}};
  if (time_ms) j["time_ms"] = *time_ms;
  return j;
}

StepRecord StepRecord::from_json(const nlohmann::json& j) {
  StepRecord r;
  r.step = j.value("step", 0);
  r.idea = j.value("idea", "");
  r.outcome = j.value("outcome", "");
  r.note = j.value("note", "");
  if (j.contains("time_ms") && j["time_ms"].is_number()) r.time_ms = j["time_ms"].get<double>();
  return r;
}

}  // namespace cutegen
