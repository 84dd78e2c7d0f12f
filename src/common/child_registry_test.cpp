#include "common/child_registry.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/line_process.h"
#include "common/process.h"

using namespace cutegen;
using namespace std::chrono_literals;

namespace {

std::vector<pid_t> read_pids(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<pid_t> pids;
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

// Waits up to `timeout` for `pid` (a child of the caller) to end; its wait status, or -1.
int wait_for(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) return status;
    if (w < 0) return -1;
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

}  // namespace

TEST(ChildRegistry, AProcessGroupIsRegisteredWhileItRuns) {
  int before = registered_child_groups();
  PosixProcessRunner r;
  std::thread t([&] { (void)r.run({.argv = {"sleep", "1"}}); });
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    seen = registered_child_groups() == before + 1;
    std::this_thread::sleep_for(5ms);
  }
  t.join();
  EXPECT_TRUE(seen);
  EXPECT_EQ(registered_child_groups(), before);
}

TEST(ChildRegistry, LineProcessRegistersUntilKilled) {
  int before = registered_child_groups();
  auto p = LineProcess::start({.argv = {"sleep", "30"}}, "/dev/null");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(registered_child_groups(), before + 1);
  p->kill();
  EXPECT_EQ(registered_child_groups(), before);
}

// A cutegen-like process (handlers installed, a run-to-completion child with a grandchild and a
// line-protocol child) gets SIGINT: it must exit 130 and every process it started must be dead.
// The supervisor is a child subreaper so the orphans come to it and their end can be checked.
TEST(ChildRegistry, SigintKillsEveryChildGroupAndExits130) {
  auto dir = make_unique_dir(std::filesystem::temp_directory_path(), "cutegen-registry-");
  ASSERT_TRUE(dir.ok());
  auto pid_file = *dir / "pids";
  pid_t supervisor = ::fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t tool = ::fork();
    if (tool == 0) {
      if (!install_termination_handlers()) ::_exit(3);
      std::thread runner([&] {
        PosixProcessRunner r;
        (void)r.run({.argv = {"sh", "-c", fmt::format("sleep 100 & echo $$ $! >> {}; wait", pid_file.string())}});
      });
      runner.detach();
      auto worker = LineProcess::start({.argv = {"sleep", "100"}}, "/dev/null");
      if (!worker) ::_exit(4);
      { std::ofstream(pid_file, std::ios::app) << worker->pid() << "\n"; }
      for (int i = 0; i < 3000 && read_pids(pid_file).size() < 3; ++i) std::this_thread::sleep_for(10ms);
      ::kill(::getpid(), SIGINT);
      std::this_thread::sleep_for(5s);
      ::_exit(5);  // the handler did not end the process
    }
    int status = wait_for(tool, 60s);
    if (status == -1 || !WIFEXITED(status)) ::_exit(10);
    if (WEXITSTATUS(status) != 130) ::_exit(20 + WEXITSTATUS(status) % 100);
    auto pids = read_pids(pid_file);
    if (pids.size() != 3) ::_exit(11);
    // Orphans are reparented to us; the tool's runner thread may also have reaped its shell in the
    // instant between the handler's kill and its exit. So: reap whatever comes to us (it must have
    // died of SIGKILL), and a pid we never reaped must be gone already (ESRCH), not still alive.
    auto deadline = std::chrono::steady_clock::now() + 10s;
    auto gone = [](pid_t p) { return ::kill(p, 0) != 0 && errno == ESRCH; };
    auto all_gone = [&] {
      for (pid_t p : pids)
        if (!gone(p)) return false;
      return true;
    };
    while (!all_gone()) {
      int s = 0;
      pid_t w = ::waitpid(-1, &s, WNOHANG);
      if (w > 0) {
        bool ours = std::find(pids.begin(), pids.end(), w) != pids.end();
        if (ours && (!WIFSIGNALED(s) || WTERMSIG(s) != SIGKILL)) ::_exit(12);
        continue;
      }
      if (std::chrono::steady_clock::now() > deadline) ::_exit(13);
      std::this_thread::sleep_for(10ms);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  ASSERT_TRUE(WIFEXITED(status));
  // 10: no exit in time; 2x: exit code x from the tool (3 handler, 4 worker, 5 handler did nothing);
  // 11: pids not all written; 12: a child died otherwise than by SIGKILL; 13: one still alive.
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::filesystem::remove_all(*dir);
}
