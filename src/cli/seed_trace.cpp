#include "cli/seed_trace.h"

#include <chrono>

#include "common/fs.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

// Asks the worker to trace the problem (`trace`, no GPU needed), then the seed stage to match and generate.
// Error: the worker failed or the problem file is broken (its message says what to fix).
Result<seed::SeedOutcome> seed_for_problem(ReferenceWorker& worker, const fs::path& problem, Precision precision) {
  // Tracing runs on meta tensors: seconds, whatever the problem's size (a CPU fallback can be slower).
  auto answer = worker.call("trace", {{"problem", fs::absolute(problem).string()}}, std::chrono::seconds(300));
  if (!answer) return answer.error();
  auto graph = seed::OpGraph::from_json(*answer);
  if (!graph) return graph.error();
  return seed::seed_from_graph(*graph, problem.filename().string(), precision);
}

}  // namespace

Result<TraceWorker> TraceWorker::start() {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-seed-");
  if (!dir) return dir.error();
  auto worker = PythonWorker::start({.log_path = *dir / "worker.log"});
  if (!worker) {
    std::error_code ec;
    fs::remove_all(*dir, ec);
    return worker.error();
  }
  return TraceWorker(*dir, std::move(*worker));
}

TraceWorker::~TraceWorker() {
  if (dir_.empty()) return;  // moved from
  worker_.reset();           // the worker ends before its directory goes
  std::error_code ec;
  fs::remove_all(dir_, ec);  // a temporary directory left behind is harmless; nothing to tell
}

Result<seed::SeedOutcome> TraceWorker::seed(const fs::path& problem, Precision precision) {
  auto outcome = seed_for_problem(*worker_, problem, precision);
  if (!outcome) {
    worker_.reset();
    auto fresh = PythonWorker::start({.log_path = dir_ / "worker.log"});
    if (!fresh) return Error{outcome.error().message + " (and the worker could not be restarted: " +
                             fresh.error().message + ")"};
    worker_ = std::move(*fresh);
  }
  return outcome;
}

Result<ProblemFacts> TraceWorker::describe(const fs::path& problem) {
  // Meta tensors: seconds, whatever the problem's size (a CPU fallback can be slower).
  auto answer = worker_->call("describe", {{"problem", fs::absolute(problem).string()}}, std::chrono::seconds(300));
  if (!answer) return answer.error();
  return ProblemFacts::from_json(*answer);
}

Result<RunSeed> seed_for_run(const std::string& start, const std::string& problem, const std::string& hint,
                             Precision precision) {
  if (start == "scratch") return RunSeed{};
  auto worker = TraceWorker::start();
  if (!worker) return worker.error();
  auto outcome = worker->seed(problem, precision);
  if (!outcome) return outcome.error();
  if (!outcome->found()) {
    if (start == "seed") return Error{outcome->match.no_seed_line() + "; " + hint};
    return RunSeed{.note = outcome->match.no_seed_line()};
  }
  return RunSeed{.source = outcome->source, .pattern = outcome->match.pattern(),
                 .description = outcome->match.description()};
}

}  // namespace cutegen::cli
