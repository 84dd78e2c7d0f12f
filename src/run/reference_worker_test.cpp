// What a problem file sees when the real reference worker (python/cutegen_worker, on the CPU) imports
// it the way every cutegen command starts it: no API key, a private HOME, no network (issue 32: problem
// files were imported unconfined, and `bench DIR` imports every file of a downloaded directory). Then how
// a worker ends on a GPU shared with other tasks (end_worker_holding).
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/file_lock.h"
#include "common/fs.h"
#include "run/reference_worker.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

// The problem file reports what it saw through the error its import raises.
constexpr const char* kProbe = R"PY(
import json, os, socket
seen = {"keys": sorted(k for k in os.environ if "KEY" in k), "home": os.environ.get("HOME")}
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=5).close()
    seen["tcp"] = "connected"
except OSError as exc:
    seen["tcp"] = type(exc).__name__
raise RuntimeError("SEEN" + json.dumps(seen) + "END")
)PY";

class ProblemFileConfinement : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 with torch is not installed";
    auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-worker-confinement-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    // A listener the probe could reach if the network were open (checked below with allow).
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(listener_, 8), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    std::string probe = kProbe;
    probe.replace(probe.find("PORT"), 4, std::to_string(ntohs(a.sin_port)));
    ASSERT_TRUE(write_file_atomic(dir_ / "probe.py", probe).ok());
    setenv("OPENAI_API_KEY", "sk-worker-test-SECRET", 1);
    setenv("MY_SERVICE_API_KEY", "also-secret", 1);
  }
  void TearDown() override {
    unsetenv("OPENAI_API_KEY");
    unsetenv("MY_SERVICE_API_KEY");
    unsetenv("CUTEGEN_WORKER_NETWORK");
    if (listener_ >= 0) ::close(listener_);
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // What the probe saw, from the worker started as cutegen starts it.
  nlohmann::json seen() {
    auto worker = PythonWorker::start({.package_dir = fs::path(CUTEGEN_SOURCE_DIR) / "python", .log_path = dir_ / "worker.log"});
    EXPECT_TRUE(worker.ok()) << worker.error().message;
    if (!worker) return {};
    auto r = (*worker)->call("load", {{"problem", (dir_ / "probe.py").string()}, {"device", "cpu"}}, std::chrono::seconds(300));
    EXPECT_FALSE(r.ok());
    if (r) return {};
    const std::string& m = r.error().message;
    auto from = m.find("SEEN"), to = m.find("END", from);
    EXPECT_NE(from, std::string::npos) << m;
    if (from == std::string::npos || to == std::string::npos) return {};
    return nlohmann::json::parse(m.substr(from + 4, to - from - 4), nullptr, false);
  }
  fs::path dir_;
  int listener_ = -1;
};

}  // namespace

TEST_F(ProblemFileConfinement, AProblemFileSeesNoKeyAPrivateHomeAndNoNetwork) {
  auto s = seen();
  ASSERT_TRUE(s.is_object()) << s;
  EXPECT_EQ(s["keys"], nlohmann::json::array()) << s;
  std::string home = s["home"].get<std::string>();
  EXPECT_EQ(fs::path(home).parent_path(), dir_) << home;  // worker-home-* beside the log
  EXPECT_NE(home, std::getenv("HOME"));
  EXPECT_EQ(s["tcp"], "PermissionError") << s;
}

TEST_F(ProblemFileConfinement, TheNetworkOpensOnlyWhenAskedFor) {
  setenv("CUTEGEN_WORKER_NETWORK", "allow", 1);
  auto s = seen();
  ASSERT_TRUE(s.is_object()) << s;
  EXPECT_EQ(s["tcp"], "connected") << "the probe reaches the listener when allowed, so its refusal above is the filter's";
  EXPECT_EQ(s["keys"], nlohmann::json::array()) << "keys stay out regardless";
}

// Ending a worker tears down the CUDA context its first `load` made, on the GPU: on a GPU shared with other
// tasks (cutegen bench) it happens holding the device lock, never beside another task's measurement.
namespace {

// A worker that says when it ends (its process's exit, in the real one).
class EndTellingWorker final : public ReferenceWorker {
 public:
  explicit EndTellingWorker(std::function<void()> on_end) : on_end_(std::move(on_end)) {}
  ~EndTellingWorker() override { on_end_(); }
  Result<nlohmann::json> call(const std::string&, nlohmann::json, std::chrono::seconds) override {
    return nlohmann::json::object();
  }

 private:
  std::function<void()> on_end_;
};

class EndWorkerHolding : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-end-worker-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Another process's view of the lock (flock on another descriptor): whether someone holds it now.
  bool held() const {
    auto probe = FileLock::try_lock(lock_file());
    EXPECT_TRUE(probe.ok());
    return probe.ok() && !probe->held();
  }
  fs::path lock_file() const { return dir_ / "GPU-fake.lock"; }
  fs::path dir_;
};

}  // namespace

TEST_F(EndWorkerHolding, TheWorkerEndsWhileTheLockIsHeld) {
  DeviceLock lock(lock_file());
  std::optional<bool> held_at_end;
  auto ended = end_worker_holding(std::make_unique<EndTellingWorker>([&] { held_at_end = held(); }), &lock);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  ASSERT_TRUE(held_at_end.has_value()) << "the worker was not ended";
  EXPECT_TRUE(*held_at_end) << "the worker ended (its CUDA context torn down) without the GPU's lock";
  EXPECT_FALSE(held()) << "the lock outlives the worker's end";
  EXPECT_GT(lock.held_seconds(), 0.0);
}

TEST_F(EndWorkerHolding, AnotherTasksMeasurementIsWaitedFor) {
  auto taken = FileLock::try_lock(lock_file());
  ASSERT_TRUE(taken.ok() && taken->held());
  std::optional<FileLock> other(std::move(*taken));  // another task, measuring
  std::atomic<bool> measuring{true};
  std::thread done([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    measuring = false;
    other->release();
  });
  DeviceLock lock(lock_file());
  std::optional<bool> during_measurement;
  auto ended = end_worker_holding(std::make_unique<EndTellingWorker>([&] { during_measurement = measuring.load(); }), &lock);
  done.join();
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  ASSERT_TRUE(during_measurement.has_value());
  EXPECT_FALSE(*during_measurement) << "the worker ended while another task measured on the GPU";
  EXPECT_GT(lock.waited_seconds(), 0.05);
}

TEST_F(EndWorkerHolding, WithoutALockTheWorkerEndsAtOnce) {
  bool ended_worker = false;
  EXPECT_TRUE(end_worker_holding(std::make_unique<EndTellingWorker>([&] { ended_worker = true; }), nullptr).ok());
  EXPECT_TRUE(ended_worker);
  EXPECT_TRUE(end_worker_holding(nullptr, nullptr).ok()) << "no worker: nothing to end";
}
