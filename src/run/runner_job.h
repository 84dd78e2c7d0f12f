#pragma once
// The job cutegen hands to one runner process, and the statistics it gets back. JSON on both sides:
// the runner reads the job from a file and writes its result to another (never stdout: a candidate's
// printf goes there).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "run/tensor_ref.h"

namespace cutegen {

struct RunnerTrial {
  std::vector<TensorRef> inputs;                 // forward inputs, then parameters, then buffers
  std::vector<std::vector<TensorRef>> outputs;   // one output list per run of this trial (usually 2)
};

struct RunnerTimingSet {
  std::vector<TensorRef> inputs;
  std::vector<TensorRef> outputs;
};

struct RunnerJob {
  std::string library;
  int device = 0;
  std::vector<RunnerTrial> trials;
  std::vector<RunnerTimingSet> timing_sets;  // empty: no timing
  int warmup = 10;
  int runs = 100;
  uint64_t flush_bytes = 256ull << 20;  // > the 60 MB L2 of an H200 several times over
  bool reuse_check = true;              // after timing: same pointers, another set's inputs (runner_main.cpp)
};

Result<RunnerJob> parse_runner_job(const nlohmann::json& j);

// Robust statistics of a sample of times (milliseconds).
struct TimeStats {
  double median = 0, min = 0, max = 0, iqr = 0, mean = 0;
  int count = 0;
};
TimeStats summarize(std::vector<double> samples);
nlohmann::json to_json(const TimeStats& s);

}  // namespace cutegen
