// What a problem file sees when the real reference worker (python/cutegen_worker, on the CPU) imports
// it the way every cutegen command starts it: no API key, a private HOME, no network (issue 32: problem
// files were imported unconfined, and `bench DIR` imports every file of a downloaded directory).
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
