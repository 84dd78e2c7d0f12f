#pragma once
// The worker the seed commands trace with: started on the CPU (tracing needs no GPU) in a private
// temporary directory that goes away with it.
#include <filesystem>
#include <memory>

#include "run/reference_worker.h"
#include "seed/seed.h"

namespace cutegen::cli {

class TraceWorker {
 public:
  static Result<TraceWorker> start();
  TraceWorker(TraceWorker&&) = default;
  TraceWorker& operator=(TraceWorker&&) = default;
  ~TraceWorker();
  // The seed for `problem`; a failed call starts a fresh worker for the next one (a problem file can
  // take its worker down with it).
  Result<seed::SeedOutcome> seed(const std::filesystem::path& problem);

 private:
  TraceWorker(std::filesystem::path dir, std::unique_ptr<PythonWorker> w) : dir_(std::move(dir)), worker_(std::move(w)) {}
  std::filesystem::path dir_;
  std::unique_ptr<PythonWorker> worker_;
};

}  // namespace cutegen::cli
