#pragma once
// The problem as the first prompt presents it: the worker's facts, the reference's source, the
// baselines and the floor, all from the judge's description of the problem without a candidate.
// Here, below the loop and the reports, because the run log records it and both read it back.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/evaluation.h"
#include "common/result.h"

namespace cutegen {

struct ProblemInfo {
  std::string source;          // the reference problem file's text
  ProblemFacts facts;
  Baselines baselines;
  std::optional<Floor> floor;
  double seconds = 0;                           // the description's wall time, holding the GPU
  std::map<std::string, double> phase_seconds;  // of it: load, baselines, roofline (Judge::describe)

  const std::string& name() const { return facts.name; }
  // "described in 9.1 s: load 1.2, baselines 7.6 (eager 1.9, compile 5.7), roofline 0.3"; empty when untimed.
  std::string timing_summary() const;
  nlohmann::json to_json() const;
  static Result<ProblemInfo> from_json(const nlohmann::json& j);
};

}  // namespace cutegen
