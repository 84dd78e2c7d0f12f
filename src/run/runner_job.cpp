#include "run/runner_job.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace cutegen {

Result<RunnerJob> parse_runner_job(const nlohmann::json& j) {
  RunnerJob job;
  try {
    job.library = j.at("library").get<std::string>();
    job.device = j.value("device", 0);
    for (const auto& t : j.at("trials")) {
      RunnerTrial trial;
      auto in = parse_tensor_refs(t.at("inputs"));
      if (!in) return in.error();
      trial.inputs = *in;
      for (const auto& o : t.at("outputs")) {
        auto out = parse_tensor_refs(o);
        if (!out) return out.error();
        trial.outputs.push_back(*out);
      }
      job.trials.push_back(std::move(trial));
    }
    if (j.contains("timing") && !j["timing"].is_null()) {
      const auto& tm = j["timing"];
      job.warmup = tm.value("warmup", job.warmup);
      job.runs = tm.value("runs", job.runs);
      job.flush_bytes = tm.value("flush_bytes", job.flush_bytes);
      job.reuse_check = tm.value("reuse_check", job.reuse_check);
      for (const auto& s : tm.at("sets")) {
        auto in = parse_tensor_refs(s.at("inputs"));
        if (!in) return in.error();
        auto out = parse_tensor_refs(s.at("outputs"));
        if (!out) return out.error();
        job.timing_sets.push_back({*in, *out});
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("malformed runner job: {}", e.what())};
  }
  if (job.runs < 1 || job.warmup < 0) return Error{"runner job: runs must be >= 1 and warmup >= 0"};
  return job;
}

TimeStats summarize(std::vector<double> v) {
  TimeStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    double pos = q * static_cast<double>(v.size() - 1);
    auto lo = static_cast<std::size_t>(pos);
    auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.count = static_cast<int>(v.size());
  s.min = v.front();
  s.max = v.back();
  s.median = at(0.5);
  s.iqr = at(0.75) - at(0.25);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return s;
}

nlohmann::json to_json(const TimeStats& s) {
  return {{"median_ms", s.median}, {"min_ms", s.min}, {"max_ms", s.max}, {"iqr_ms", s.iqr}, {"mean_ms", s.mean},
          {"runs", s.count}};
}

}  // namespace cutegen
