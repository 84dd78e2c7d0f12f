#include "common/step_record.h"

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

nlohmann::json StepRecord::to_json() const {
  nlohmann::json j = {{"step", n}, {"kind", std::string(to_string(kind))}, {"idea", idea},
                      {"outcome", std::string(to_string(outcome))}, {"note", note}};
  if (verdict) j["verdict"] = to_string(*verdict);
  if (time_ms) j["time_ms"] = *time_ms;
  if (speedup) j["speedup"] = *speedup;
  if (!evidence.empty()) j["evidence"] = evidence;
  return j;
}

}  // namespace cutegen
