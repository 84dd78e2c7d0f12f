#include "bench/baseline_runner.h"

#include <fmt/format.h>

#include <optional>

#include "common/evaluation.h"
#include "common/fs.h"
#include "common/terminal_text.h"
#include "run/roofline.h"

namespace cutegen::bench {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

BaselineTaskRunner::BaselineTaskRunner(BaselineRunnerOptions options, int slots, WorkerFactory factory)
    : options_(std::move(options)), factory_(std::move(factory)), slots_(static_cast<size_t>(std::max(1, slots))) {}

BaselineTaskRunner::~BaselineTaskRunner() {
  for (auto& slot : slots_)
    if (auto ended = end_worker_holding(std::move(slot.worker), slot.lock.get()); !ended)
      print_safe(stderr, "bench: a reference worker was ended without the GPU's lock: {}\n", ended.error().message);
}

TaskRun BaselineTaskRunner::run(const ProblemTask& task, const Lane& lane, int slot_index) {
  TaskRun out;
  TaskRecord& rec = out.record;
  rec.mode = "baselines";
  Slot& slot = slots_.at(static_cast<size_t>(slot_index));
  if (!slot.lock || slot.lock->path() != lane.lock_file) slot.lock = std::make_unique<DeviceLock>(lane.lock_file);
  if (!slot.worker) {
    auto w = factory_(slot_index);
    if (!w) {
      // No worker at all (no Python, no torch): every task would fail the same way.
      rec.verdict = TaskVerdict::not_started;
      rec.detail = w.error().message;
      out.stop_suite = true;
      return out;
    }
    slot.worker = std::move(*w);
  }
  const double busy_before = slot.lock->held_seconds(), wait_before = slot.lock->waited_seconds();
  auto s = measure(task, lane, slot, rec);
  rec.gpu_busy_s = slot.lock->held_seconds() - busy_before;
  rec.gpu_wait_s = slot.lock->waited_seconds() - wait_before;
  if (s) {
    rec.verdict = TaskVerdict::measured;
    return out;
  }
  // measure() ended the worker of a crashed task while it still held the GPU.
  rec.verdict = s.error().kind == ErrorKind::problem_file ? TaskVerdict::problem_error : TaskVerdict::crashed;
  std::string msg = s.error().message;
  rec.detail = msg.substr(0, msg.find('\n'));
  return out;
}

Status BaselineTaskRunner::measure(const ProblemTask& task, const Lane& lane, Slot& slot, TaskRecord& rec) {
  ReferenceWorker& worker = *slot.worker;
  // The whole measurement holds the lane's GPU: loading draws the inputs and runs the reference there
  // (another slot's GPU work beside a timing run slowed eager PyTorch by up to 2x on an H200,
  // benchmarks/results.md), and torch.compile's first run autotunes Triton's
  // pointwise configurations by timing them on the GPU: compiled outside the lock, with another slot
  // timing beside it, ELU's compiled baseline came out 12% slower than a direct measurement
  // (benchmarks/results.md) — a slower baseline inflates every speedup over it. The CPU
  // part of the compile now costs the lane its GPU; baselines are cached, so it is paid once.
  std::optional<DeviceLock::Hold> gpu;
  if (auto h = slot.lock->hold(); h) gpu.emplace(std::move(*h));
  else return h.error();
  auto measured = measure_holding_gpu(task, lane, worker, rec);
  // The slot's worker keeps nothing on the GPU into another slot's turn: an idle worker with a
  // KernelBench problem loaded held up to 55 GiB of an H200 (worker-protocol.md, `release_gpu`).
  auto released = worker.call("release_gpu", nlohmann::json::object(), 120s);
  Status s = !measured ? measured : !released ? Status(released.error()) : ok_status();
  // A worker that failed but for its problem may be gone or wedged (a GPU fault kills its context): it
  // ends here, before the GPU goes to another slot, since its exit tears that context down on the GPU;
  // the next task starts a fresh one.
  if (!s && s.error().kind != ErrorKind::problem_file) slot.worker.reset();
  return s;
}

Status BaselineTaskRunner::measure_holding_gpu(const ProblemTask& task, const Lane& lane, ReferenceWorker& worker,
                                               TaskRecord& rec) {
  auto meta = worker.call("load", {{"problem", task.path.string()}, {"device", lane.torch_device}, {"seed", 0}}, 600s);
  if (!meta) return meta.error();
  auto facts = ProblemFacts::from_json(*meta);
  if (!facts) return Error{"the worker's load answer: " + facts.error().message + " (a worker bug)"};
  rec.device = facts->gpu;
  rec.flops = facts->flops;
  rec.min_bytes = facts->min_bytes;
  const nlohmann::json request{{"modes", options_.modes},       {"warmup_ms", options_.warmup_ms},
                               {"runs", options_.runs},         {"precision", options_.precision},
                               {"sets", 2},                     {"seed", 7},
                               {"device", lane.torch_device}, {"cache_dir", (options_.cache_root / "baselines").string()}};
  if (auto p = worker.call("prepare_baselines", request, 1800s); !p) return p.error();
  auto b = worker.call("time_baselines", request, 1800s);
  if (!b) return b.error();
  auto baselines = Baselines::from_json(*b);
  if (!baselines) return Error{"the worker's time_baselines answer: " + baselines.error().message + " (a worker bug)"};
  if (baselines->eager) {
    rec.eager_ms = baselines->eager->median_ms();
    rec.eager_error = baselines->eager->error;
  }
  if (baselines->compile) {
    rec.compile_ms = baselines->compile->median_ms();
    rec.compile_error = baselines->compile->error;
  }
  // No floor on a CPU: the roofline is a GPU's (DRAM bandwidth and tensor-core rates), and a CPU's
  // "floor" would print speedups that mean nothing. CPU runs are for tests and smoke runs.
  if (lane.torch_device == "cpu") return ok_status();
  // The floor: the device's calibration (measured once per device name and cached, as the judge does).
  fs::path path = calibration_path(options_.cache_root, facts->gpu.empty() ? "unknown" : facts->gpu);
  auto c = [&] {
    std::lock_guard<std::mutex> g(calibration_mu_);  // lanes share the cache: one measures, the others read it
    return cached_calibration(path, [&] { return worker.call("calibrate", {{"device", lane.torch_device}}, 900s); });
  }();
  if (!c) return c.error();
  Floor f = roofline_floor(*c, facts->min_bytes, written_bytes(*facts), facts->flops, facts->dtype, options_.precision);
  if (f.floor_ms > 0) rec.floor_ms = f.floor_ms;
  rec.floor_bound = f.bound;
  return ok_status();
}

}  // namespace cutegen::bench
