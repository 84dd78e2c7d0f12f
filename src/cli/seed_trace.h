#pragma once
// The worker the seed and export commands trace with: started on the CPU (tracing needs no GPU) in a private
// temporary directory that goes away with it. The CLI, not the seed stage, talks to the worker: the seed
// stage is graph in, kernel text out (src/seed/seed.h).
#include <filesystem>
#include <memory>
#include <string>

#include "common/evaluation.h"
#include "run/reference_worker.h"
#include "seed/seed.h"

namespace cutegen::cli {

class TraceWorker {
 public:
  static Result<TraceWorker> start();
  TraceWorker(TraceWorker&&) = default;
  TraceWorker& operator=(TraceWorker&&) = default;
  ~TraceWorker();
  // The seed for `problem` under the run's precision policy; a failed call starts a fresh worker for the next
  // one (a problem file can take its worker down with it).
  Result<seed::SeedOutcome> seed(const std::filesystem::path& problem, Precision precision = kDefaultPrecision);
  // The problem's arguments, parameters, outputs and constructor arguments, built on meta tensors (the
  // worker's `describe`): what `cutegen export PROBLEM KERNEL` exports for.
  Result<ProblemFacts> describe(const std::filesystem::path& problem);

 private:
  TraceWorker(std::filesystem::path dir, std::unique_ptr<PythonWorker> w) : dir_(std::move(dir)), worker_(std::move(w)) {}
  std::filesystem::path dir_;
  std::unique_ptr<PythonWorker> worker_;
};

// The run's first kernel for --start: `scratch` gives none; `auto` the seed when one matches (else none,
// with `note` saying why); `seed` the seed, or the no-seed line and `hint` as an Error.
struct RunSeed {
  std::string source;   // empty: the LLM synthesises the first kernel
  std::string pattern;      // what the seed computes (report.md, config.json)
  std::string description;  // "pointwise chain y = relu(x)"
  std::string note;     // auto without a seed: the no-seed line
};
Result<RunSeed> seed_for_run(const std::string& start, const std::string& problem, const std::string& hint,
                             Precision precision);

}  // namespace cutegen::cli
