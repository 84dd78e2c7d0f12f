#pragma once
// The problem as the first prompt presents it: the worker's facts, the reference's source, the
// baselines and the floor, all from the judge's description of the problem without a candidate.
// Here, below the loop and the reports, because the run log records it and both read it back.
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

  const std::string& name() const { return facts.name; }
  nlohmann::json to_json() const;
  static Result<ProblemInfo> from_json(const nlohmann::json& j);
};

}  // namespace cutegen
