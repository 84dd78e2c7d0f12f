#pragma once
// report.md of a run: the problem, the baselines and the roofline floor, every optimisation step with
// its outcome, and the best kernel's numbers. Plain data in, so it is built the same way from a live
// run and from a resumed one.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cutegen {

struct RunSummary {
  std::string problem_name;
  std::string workload_class;
  std::optional<double> eager_ms, compile_ms, floor_ms;
  std::string bound;
  std::string stop_reason;
  nlohmann::json history = nlohmann::json::array();  // StepRecord::to_json() entries
  std::optional<nlohmann::json> best;                // Evaluation::to_json() of the best kernel
  int syntheses = 0;
  int llm_calls = 0;
  long long tokens = 0;
  double cost_usd = 0;
  std::string llm;                                   // backend:model
  std::string profile_policy;
};

std::string render_run_report(const RunSummary& s);

}  // namespace cutegen
