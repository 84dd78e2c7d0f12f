// spawn_child_group, the one posix_spawn behind PosixProcessRunner and LineProcess: what every child of
// cutegen starts with (its own group, default signals, the allow-listed environment, its streams where
// the caller said) and that it is in the child registry before the caller sees it.
#include "common/spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/child_registry.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
using cutegen::testing::contains;
using cutegen::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// A child started on two fresh pipes, its stdout read to the end and the child reaped.
struct Ran {
  pid_t pid = -1;
  std::string out;
  int status = -1;
};

Ran run_to_end(const ProcessSpec& spec, const std::string& input, const fs::path& err_file) {
  int in[2], out[2];
  EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  auto pid = spawn_child_group(spec, {.in = in[0], .out = out[1], .err = err_file});
  ::close(in[0]);
  ::close(out[1]);
  Ran r;
  if (!pid) {
    ADD_FAILURE() << pid.error().message;
    ::close(in[1]);
    ::close(out[0]);
    return r;
  }
  r.pid = *pid;
  EXPECT_EQ(::write(in[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(in[1]);
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  EXPECT_EQ(::waitpid(r.pid, &r.status, 0), r.pid);
  unregister_child_group(r.pid);
  return r;
}

// The value of a "Name:\tvalue" line of /proc/PID/status.
std::string status_field(const std::string& status, const std::string& name) {
  std::istringstream lines(status);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(name + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", name.size() + 1));
  return "";
}

// The bits of signals 1-31 in a /proc signal set (hex, bit n-1 for signal n).
unsigned long long standard_signals(const std::string& hex) {
  return hex.empty() ? ~0ull : std::stoull(hex, nullptr, 16) & 0x7fffffffull;
}

}  // namespace

TEST(SpawnChildGroup, TheChildLeadsItsOwnGroupWithDefaultSignalsAndIsRegistered) {
  TempDir dir;
  // What cutegen does to itself must not reach the child: SIGPIPE ignored, a signal blocked.
  struct sigaction ignore {}, old_pipe {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old_pipe), 0);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask), 0);
  const int registered_before = registered_child_groups();

  // cat reads its own /proc entry: its process group (the fifth field of stat) and its signal state.
  int in[2], out[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  auto pid = spawn_child_group({.argv = {"cat", "/proc/self/stat", "/proc/self/status"}},
                               {.in = in[0], .out = out[1], .err = dir.path / "err.log"});
  ::close(in[0]);
  ::close(out[1]);
  ::close(in[1]);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  EXPECT_EQ(registered_child_groups(), registered_before + 1) << "registered before the caller sees the pid";
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(*pid, &status, 0), *pid);
  unregister_child_group(*pid);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);

  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  const std::string stat_line = text.substr(0, text.find('\n'));
  std::istringstream stat(stat_line.substr(stat_line.rfind(')') + 2));  // after "pid (comm) "
  std::string state;
  pid_t ppid = 0, pgrp = 0;
  stat >> state >> ppid >> pgrp;
  EXPECT_EQ(pgrp, *pid) << "a process group of its own: a timeout or Ctrl-C kills all it started";
  // The standard signals (1-31; glibc keeps its own real-time ones, 32 and 33, out of sigfillset).
  EXPECT_EQ(standard_signals(status_field(text, "SigIgn")), 0u) << text;
  EXPECT_EQ(standard_signals(status_field(text, "SigBlk")), 0u) << text;
  EXPECT_EQ(registered_child_groups(), registered_before);
}

TEST(SpawnChildGroup, StreamsGoWhereTheCallerSaysAndStderrToAFileIsAppended) {
  TempDir dir;
  const fs::path err = dir.path / "worker.log";
  ASSERT_TRUE(write_file_atomic(err, "from before\n").ok());
  Ran r = run_to_end({.argv = {"sh", "-c", "read line; echo \"got $line\"; echo oops >&2; pwd"}, .cwd = dir.path},
                     "hello\n", err);
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
  EXPECT_EQ(r.out, "got hello\n" + dir.path.string() + "\n");
  auto log = read_file(err);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(*log, "from before\noops\n");
}

TEST(SpawnChildGroup, TheChildGetsTheAllowListedEnvironment) {
  TempDir dir;
  setenv("OPENAI_API_KEY", "sk-spawn-test-SECRET", 1);
  Ran r = run_to_end({.argv = {"sh", "-c", "echo \"${OPENAI_API_KEY:-no key} $CUTEGEN_SPAWN_TEST\""},
                      .env = {{"CUTEGEN_SPAWN_TEST", "set by the spec"}}},
                     "", dir.path / "err.log");
  unsetenv("OPENAI_API_KEY");
  EXPECT_EQ(r.out, "no key set by the spec\n");
}

TEST(SpawnChildGroup, AProgramThatIsNotThereIsAnErrorNamingIt) {
  const int registered_before = registered_child_groups();
  auto missing = spawn_child_group({.argv = {"cutegen-no-such-program"}}, {.in = 0, .out = 1, .err = 2});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error().message, "`cutegen-no-such-program` not found on PATH")) << missing.error().message;
  auto empty = spawn_child_group({}, {.in = 0, .out = 1, .err = 2});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(registered_child_groups(), registered_before);
}
