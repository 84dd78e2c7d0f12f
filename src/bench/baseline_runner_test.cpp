// The baselines runner against a fake worker: which worker calls run while the lane's GPU lock is
// held. Loading and torch.compile are CPU work done outside it (other tasks keep timing on the GPU);
// the timed runs and the calibration are inside it (never two timed measurements on one GPU at once).
#include "bench/baseline_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "common/file_lock.h"
#include "common/fs.h"

namespace cutegen::bench {
namespace {
namespace fs = std::filesystem;

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

  fs::path dir_;
  Lane lane_;
};

Result<nlohmann::json> answer(const std::string& op) {
  if (op == "load")
    return nlohmann::json{{"name", "relu"}, {"gpu", "Fake GPU"}, {"dtype", "float32"}, {"min_bytes", 8000000},
                          {"flops", 1000000}};
  if (op == "prepare_baselines") return nlohmann::json{{"compiled", true}};
  if (op == "time_baselines")
    return nlohmann::json{{"eager", {{"median_ms", 4.0}}}, {"compile", {{"median_ms", 3.0}}}};
  if (op == "calibrate")
    return nlohmann::json{{"gpu", "Fake GPU"}, {"hbm_gbps", 4000},
                          {"tflops", {{"fp32", 50}, {"tf32", 400}, {"fp16", 700}, {"bf16", 700}}}};
  return Error{"unexpected op " + op};
}

TEST_F(BaselineRunnerTest, CompilesOutsideTheGpuLockAndTimesInsideIt) {
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
                       {"load", false}, {"prepare_baselines", false}, {"time_baselines", true}, {"calibrate", true}}));
  EXPECT_FALSE(lock_is_held()) << "the lock outlives the task";
}

TEST_F(BaselineRunnerTest, TimingWaitsWhileAnotherProcessHoldsTheGpu) {
  // The lock is taken before time_baselines, not before load: with the GPU held elsewhere the task
  // loads and compiles, then waits; once released it times.
  auto other = FileLock::try_lock(lane_.lock_file);
  ASSERT_TRUE(other.ok() && other->held());
  std::vector<std::string> before_release;
  auto r = runner([&](const std::string& op, const nlohmann::json&) {
    if (other->held()) {
      before_release.push_back(op);
      if (op == "prepare_baselines") other->release();  // the other process finishes its timing now
    }
    return answer(op);
  });
  TaskRun run = r.run(ProblemTask{"relu", dir_ / "relu.py", std::nullopt}, lane_, 0);
  EXPECT_EQ(run.record.verdict, TaskVerdict::measured) << run.record.detail;
  EXPECT_EQ(before_release, (std::vector<std::string>{"load", "prepare_baselines"}));
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

}  // namespace
}  // namespace cutegen::bench
