#pragma once
// --baselines-only: per problem the eager and torch.compile times, bytes, FLOPs, the roofline floor
// and the best speedup over eager physics allows — no LLM, no kernel. The reference worker runs in
// this process's children, one per slot (each slot's worker stays loaded between tasks); a worker
// that dies is restarted for the next task. On the CPU (device "cpu") the worker times with the
// wall clock and labels the results "cpu": for tests and smoke runs, never GPU numbers.
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "bench/scheduler.h"
#include "common/evaluation.h"
#include "common/file_lock.h"
#include "run/reference_worker.h"

namespace cutegen::bench {

struct BaselineRunnerOptions {
  std::vector<std::string> modes{"eager", "compile"};
  int runs = 100;
  double warmup_ms = 100;
  std::string precision = to_string(kDefaultPrecision);
  std::filesystem::path cache_root;   // baselines/ and the calibrations live here
  std::filesystem::path log_dir;      // the workers' stderr
};

class BaselineTaskRunner final : public TaskRunner {
 public:
  using WorkerFactory = std::function<Result<std::unique_ptr<ReferenceWorker>>(int slot)>;
  BaselineTaskRunner(BaselineRunnerOptions options, int slots, WorkerFactory factory);
  // Each slot's worker ends holding its lane's lock (end_worker_holding): other suites may share the GPU.
  ~BaselineTaskRunner() override;
  TaskRun run(const ProblemTask& task, const Lane& lane, int slot) override;

 private:
  struct Slot {
    std::unique_ptr<ReferenceWorker> worker;
    std::unique_ptr<DeviceLock> lock;
  };
  Status measure(const ProblemTask& task, const Lane& lane, Slot& slot, TaskRecord& rec);
  Status measure_holding_gpu(const ProblemTask& task, const Lane& lane, ReferenceWorker& worker, TaskRecord& rec);
  BaselineRunnerOptions options_;
  WorkerFactory factory_;
  std::vector<Slot> slots_;
  std::mutex calibration_mu_;  // one slot calibrates a device; the others then read its cache
};

}  // namespace cutegen::bench
