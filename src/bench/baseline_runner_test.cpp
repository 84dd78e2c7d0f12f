// The baselines runner against a fake worker: which worker calls run while the lane's GPU lock is
// held. Loading (GPU work: inputs, the reference), the timed runs and the calibration are inside it —
// nothing of another slot runs on the GPU beside a timing run; torch.compile (CPU work) is outside.
#include "bench/baseline_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <atomic>
#include <algorithm>
#include <functional>
#include <thread>

#include "common/file_lock.h"
#include "common/fs.h"

namespace cutegen::bench {
namespace {
namespace fs = std::filesystem;

// A worker that says when it ends: the real one's process exit, which tears its CUDA context down on the GPU.
class EndTellingWorker final : public ReferenceWorker {
 public:
  EndTellingWorker(FakeReferenceWorker::Handler answer, std::function<void()> on_end)
      : answer_(std::move(answer)), on_end_(std::move(on_end)) {}
  ~EndTellingWorker() override { on_end_(); }
  Result<nlohmann::json> call(const std::string& op, nlohmann::json args, std::chrono::seconds) override {
    return answer_(op, args);
  }

 private:
  FakeReferenceWorker::Handler answer_;
  std::function<void()> on_end_;
};

class BaselineRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cutegen-baseline-runner-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    lane_ = Lane{"gpu0", "0", "cuda:0", "GPU-fake", dir_ / "GPU-fake.lock"};
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Another process's view of the lane's lock (flock on another descriptor): free or held now.
  bool lock_is_held() const {
    auto probe = FileLock::try_lock(lane_.lock_file);
    EXPECT_TRUE(probe.ok());
    return probe.ok() && !probe->held();
  }

  BaselineTaskRunner runner(FakeReferenceWorker::Handler answer) {
    BaselineRunnerOptions o;
    o.cache_root = dir_ / "cache";
    return BaselineTaskRunner(o, 1, [answer](int) -> Result<std::unique_ptr<ReferenceWorker>> {
      return std::unique_ptr<ReferenceWorker>(std::make_unique<FakeReferenceWorker>(answer));
    });
  }

  // A runner whose workers append to `ends`, as each one ends, whether the lane's lock was held then.
  BaselineTaskRunner runner_telling_ends(FakeReferenceWorker::Handler answer, std::vector<bool>& ends) {
    BaselineRunnerOptions o;
    o.cache_root = dir_ / "cache";
    return BaselineTaskRunner(o, 1, [this, answer, &ends](int) -> Result<std::unique_ptr<ReferenceWorker>> {
      return std::unique_ptr<ReferenceWorker>(
          std::make_unique<EndTellingWorker>(answer, [this, &ends] { ends.push_back(lock_is_held()); }));
    });
  }

  fs::path dir_;
  Lane lane_;
};

Result<nlohmann::json> answer(const std::string& op) {
  if (op == "load")
    return nlohmann::json{{"name", "relu"}, {"gpu", "Fake GPU"}, {"dtype", "float32"}, {"min_bytes", 8000000},
                          {"flops", 1000000}};
  if (op == "prepare_baselines") return nlohmann::json{{"compiled", true}};
  if (op == "release_gpu") return nlohmann::json{{"reserved_bytes", 0}};
  if (op == "time_baselines")
    return nlohmann::json{{"eager", {{"median_ms", 4.0}}}, {"compile", {{"median_ms", 3.0}}}};
  if (op == "calibrate")
    return nlohmann::json{{"gpu", "Fake GPU"}, {"hbm_gbps", 4000},
                          {"tflops", {{"fp32", 50}, {"tf32", 400}, {"fp16", 700}, {"bf16", 700}}}};
  return Error{"unexpected op " + op};
}

// torch.compile's first run autotunes on the GPU: it is GPU work like loading and timing.
TEST_F(BaselineRunnerTest, LoadsCompilesAndTimesInsideTheGpuLock) {
  std::vector<std::pair<std::string, bool>> calls;  // op, lock held during it
  auto r = runner([&](const std::string& op, const nlohmann::json&) {
    calls.emplace_back(op, lock_is_held());
    return answer(op);
  });
  TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, lane_, 0);
  EXPECT_EQ(run.record.verdict, TaskVerdict::measured) << run.record.detail;
  EXPECT_DOUBLE_EQ(*run.record.eager_ms, 4.0);
  EXPECT_DOUBLE_EQ(*run.record.compile_ms, 3.0);
  EXPECT_EQ(calls, (std::vector<std::pair<std::string, bool>>{
                       {"load", true}, {"prepare_baselines", true}, {"time_baselines", true}, {"calibrate", true},
                       {"release_gpu", true}}));  // the next slot's turn starts with this worker's memory given back
  EXPECT_FALSE(lock_is_held()) << "the lock outlives the task";
}

TEST_F(BaselineRunnerTest, ACpuLaneGetsNoFloorAndNoCalibration) {
  Lane cpu = lane_;
  cpu.torch_device = "cpu";
  std::vector<std::string> ops;
  auto r = runner([&](const std::string& op, const nlohmann::json&) {
    ops.push_back(op);
    return answer(op);
  });
  TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, cpu, 0);
  EXPECT_EQ(run.record.verdict, TaskVerdict::measured) << run.record.detail;
  EXPECT_DOUBLE_EQ(*run.record.eager_ms, 4.0);
  EXPECT_FALSE(run.record.floor_ms.has_value()) << "a roofline floor on a CPU means nothing";
  EXPECT_TRUE(run.record.floor_bound.empty());
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "calibrate"), 0);
}

TEST_F(BaselineRunnerTest, TimingWaitsWhileAnotherProcessHoldsTheGpu) {
  // Another process holds the lane's GPU when the task starts: no worker call may touch the GPU until
  // it lets go.
  auto taken = FileLock::try_lock(lane_.lock_file);
  ASSERT_TRUE(taken.ok() && taken->held());
  std::optional<FileLock> other(std::move(*taken));
  std::atomic<bool> released{false};
  std::thread letgo([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    released = true;
    other->release();
  });
  std::vector<std::string> seen_while_other_held;
  auto r = runner([&](const std::string& op, const nlohmann::json&) {
    if (!released) seen_while_other_held.push_back(op);
    return answer(op);
  });
  auto t0 = std::chrono::steady_clock::now();
  TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, lane_, 0);
  letgo.join();
  EXPECT_EQ(run.record.verdict, TaskVerdict::measured) << run.record.detail;
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(90)) << "the task did not wait for the lock";
  EXPECT_TRUE(seen_while_other_held.empty()) << "a worker call started while another process held the GPU: "
                                             << seen_while_other_held.front();  EXPECT_GT(run.record.gpu_wait_s, 0.05);
}

TEST_F(BaselineRunnerTest, APrepareFailureIsACrashedTaskWithTheWorkersLine) {
  auto r = runner([&](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "prepare_baselines") return Error{"worker died: CUDA error: an illegal memory access\nmore"};
    return answer(op);
  });
  TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, lane_, 0);
  EXPECT_EQ(run.record.verdict, TaskVerdict::crashed);
  EXPECT_EQ(run.record.detail, "worker died: CUDA error: an illegal memory access");
}

// A worker's exit tears down its CUDA context on the GPU: it must not fall in another slot's (or another
// suite's) timed runs any more than the load that made the context may.
TEST_F(BaselineRunnerTest, ACrashedWorkerEndsHoldingTheGpu) {
  std::vector<bool> ends;  // per worker ended: whether the lane's lock was held then
  auto r = runner_telling_ends([](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "time_baselines") return Error{"reference worker is gone (the process stopped reading its input)"};
    return answer(op);
  }, ends);
  TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, lane_, 0);
  EXPECT_EQ(run.record.verdict, TaskVerdict::crashed);
  EXPECT_EQ(ends, std::vector<bool>{true}) << "the crashed worker was not ended holding the GPU";
  EXPECT_FALSE(lock_is_held()) << "the lock outlives the task";
}

TEST_F(BaselineRunnerTest, TheWorkersEndHoldingTheGpuWhenTheSuiteEnds) {
  std::vector<bool> ends;
  {
    auto r = runner_telling_ends([](const std::string& op, const nlohmann::json&) { return answer(op); }, ends);
    TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, lane_, 0);
    EXPECT_EQ(run.record.verdict, TaskVerdict::measured) << run.record.detail;
    EXPECT_TRUE(ends.empty()) << "a slot's worker stays between tasks";
  }
  EXPECT_EQ(ends, std::vector<bool>{true}) << "the slot's worker was not ended holding the GPU";
  EXPECT_FALSE(lock_is_held());
}

TEST_F(BaselineRunnerTest, AProblemErrorKeepsTheWorker) {
  std::vector<bool> ends;
  auto r = runner_telling_ends([](const std::string& op, const nlohmann::json&) -> Result<nlohmann::json> {
    if (op == "load") return Error{"relu.py:3: get_inputs() raised ValueError", ErrorKind::problem_file};
    return answer(op);
  }, ends);
  TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, lane_, 0);
  EXPECT_EQ(run.record.verdict, TaskVerdict::problem_error);
  EXPECT_TRUE(ends.empty()) << "the problem was at fault, not the worker";
}

}  // namespace
}  // namespace cutegen::bench
