// The sandbox as a candidate meets it: through cutegen-sandbox (how nvcc runs) with a probe program
// that tries one hostile thing per run, and in-process (how the runner confines itself) in a forked
// child. Where Landlock is missing from the kernel the Landlock tests skip and say so.
#include "sandbox/sandbox.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/process.h"
#include "common/testdata/test_helpers.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox_command.h"

using namespace cutegen;
using cutegen::testing::TempDir;
using namespace std::chrono_literals;

namespace cutegen {
// Test names and failure messages say "runner", not the enum's bytes.
void PrintTo(SandboxPolicy::Syscalls s, std::ostream* os) { *os << to_string(s); }
}  // namespace cutegen
namespace fs = std::filesystem;

namespace {

const fs::path kWrapper = CUTEGEN_SANDBOX_BIN;
const fs::path kProbe = CUTEGEN_SANDBOX_PROBE;

bool have_landlock() { return landlock::abi_version() > 0; }
#define REQUIRE_LANDLOCK(min_abi)                                                                   \
  if (landlock::abi_version() < (min_abi))                                                          \
  GTEST_SKIP() << "this kernel offers Landlock ABI " << landlock::abi_version() << ", the test needs " \
               << (min_abi) << ": file/network confinement cannot be shown here"

// What every program needs to start (loader, libc, locale) plus the probe's own directory.
std::vector<fs::path> system_reads() {
  std::vector<fs::path> r;
  for (const char* p : {"/usr", "/lib", "/lib64", "/etc", "/proc"})
    if (fs::exists(p)) r.push_back(p);
  r.push_back(kProbe.parent_path());
  return r;
}

ProcessResult probe(const SandboxPolicy& policy, std::vector<std::string> args, ProcessSpec spec = {}) {
  args.insert(args.begin(), kProbe.string());
  spec.argv = sandbox_command(kWrapper, policy, args);
  spec.timeout = 60s;
  PosixProcessRunner runner;
  auto r = runner.run(spec);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : ProcessResult{};
}

SandboxPolicy runner_policy() {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::runner;
  p.read_paths = system_reads();
  return p;
}

SandboxPolicy compiler_policy() {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::compiler;
  p.read_paths = system_reads();
  return p;
}

// A TCP listener on 127.0.0.1 that can say whether anyone connected.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd_); }
  uint16_t port() const { return port_; }
  bool someone_connected() {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) ::close(c);
    return c >= 0;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};


// A process of the test's own, in a process group of its own, that a confined probe tries to change:
// its scheduling state is read from outside before and after, so a call that claims to be refused
// but took effect is caught.
class Victim {
 public:
  Victim() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      for (;;) ::pause();
    }
    ::setpgid(pid_, pid_);  // also here: the probe may run before the child got to it
  }
  ~Victim() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

  // Nice, policy, affinity, CPU limit and I/O priority, as one comparable line.
  std::string state() const {
    errno = 0;
    int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(pid_));
    int policy = ::sched_getscheduler(pid_);
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    ::sched_getaffinity(pid_, sizeof cpus, &cpus);
    rlimit cpu{};
    ::prlimit(pid_, RLIMIT_CPU, nullptr, &cpu);
    long ioprio = ::syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid_);
    return fmt::format("nice {} policy {} cpus {} cpu-limit {} ioprio {}", nice, policy, CPU_COUNT(&cpus),
                       static_cast<long long>(cpu.rlim_cur), ioprio);
  }

 private:
  pid_t pid_ = -1;
};

// A unix socket listening on a path, as the Docker daemon, D-Bus or an X server do.
class UnixListener {
 public:
  explicit UnixListener(const fs::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
    EXPECT_EQ(::listen(fd_, 4), 0);
  }
  ~UnixListener() { ::close(fd_); }
  bool someone_connected() {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) ::close(c);
    return c >= 0;
  }

 private:
  fs::path path_;
  int fd_ = -1;
};

}  // namespace

// --- the wrapper's command line ---

TEST(SandboxCommand, RoundTripsThroughTheWrappersParser) {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::compiler;
  p.read_paths = {"/usr", "/opt/cuda"};
  p.write_paths = {"/tmp/stage"};
  p.address_space_bytes = 17179869184ull;
  p.file_size_bytes = 1 << 20;
  p.cpu_seconds = 60;
  p.open_files = 256;
  p.deny_threads = false;
  p.tcp_connect_ports = {49152};
  p.confine_tcp = false;
  p.confine_abstract_unix = false;
  p.background = true;
  p.preload = "/opt/cutegen/cutegen-denied-as-missing.so";
  auto cmd = sandbox_command("/bin/cutegen-sandbox", p, {"nvcc", "--", "x.cu"});
  ASSERT_EQ(cmd.front(), "/bin/cutegen-sandbox");
  auto parsed = parse_sandbox_args(std::vector<std::string>(cmd.begin() + 1, cmd.end()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const auto& q = parsed->policy;
  EXPECT_EQ(q.syscalls, p.syscalls);
  EXPECT_EQ(q.read_paths, p.read_paths);
  EXPECT_EQ(q.write_paths, p.write_paths);
  EXPECT_EQ(q.address_space_bytes, p.address_space_bytes);
  EXPECT_EQ(q.file_size_bytes, p.file_size_bytes);
  EXPECT_EQ(q.cpu_seconds, p.cpu_seconds);
  EXPECT_EQ(q.open_files, p.open_files);
  EXPECT_FALSE(q.deny_threads);
  EXPECT_EQ(q.tcp_connect_ports, p.tcp_connect_ports);
  EXPECT_FALSE(q.confine_tcp);
  EXPECT_FALSE(q.confine_abstract_unix);
  EXPECT_TRUE(q.background);
  EXPECT_EQ(q.preload, p.preload);
  // Everything after the first `--` is the program's, including a later `--`.
  EXPECT_EQ(parsed->program, (std::vector<std::string>{"nvcc", "--", "x.cu"}));
}

TEST(SandboxCommand, BadArgumentsAreOneLineErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--syscalls", "paranoid", "--", "true"}, {"--rlimit-as", "lots", "--", "true"}, {"--read"},
           {"--tcp-port", "70000", "--", "true"}, {"--frobnicate", "--", "true"}, {"true"}, {"--read", "/usr"},
           // LD_PRELOAD splits at spaces and colons, and a relative path depends on the directory.
           {"--preload", "lib.so", "--", "true"}, {"--preload", "/a b/lib.so", "--", "true"},
           {"--preload", "/a:/b.so", "--", "true"}}) {
    auto r = parse_sandbox_args(args);
    ASSERT_FALSE(r.ok()) << fmt::format("{}", fmt::join(args, " "));
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  }
  EXPECT_NE(parse_sandbox_args({"--syscalls", "paranoid", "--", "true"}).error().message.find("compiler, runner"),
            std::string::npos);
}

// --- through cutegen-sandbox, runner profile: hostile calls end the program with SIGSYS ---

class RunnerProfileWrapper : public ::testing::TestWithParam<const char*> {};

TEST_P(RunnerProfileWrapper, HostileCallIsKilledBySigsys) {
  auto r = probe(runner_policy(), {GetParam()});
  EXPECT_EQ(r.term_signal, SIGSYS) << r.describe_end() << "; out: " << r.out << " err: " << r.err;
  EXPECT_EQ(r.out, "");  // the probe never got to report that the call worked
}
INSTANTIATE_TEST_SUITE_P(Calls, RunnerProfileWrapper,
                         ::testing::Values("fork", "exec", "socket-inet", "socket-udp", "ptrace", "kill-parent",
                                           "setsid"));

TEST(RunnerProfileWrapperCalls, LibraryProbesGetEpermAndSocketpairsWork) {
  for (const char* action : {"thread", "sigaction", "dumpable", "socket-unix", "socket-netlink"}) {
    auto r = probe(runner_policy(), {action});
    EXPECT_EQ(r.exit_code, 1) << action << ": " << r.describe_end() << " " << r.err;
    EXPECT_EQ(r.out, "denied errno=1 (Operation not permitted)\n") << action;
  }
  auto pair = probe(runner_policy(), {"socketpair"});
  EXPECT_EQ(pair.out, "ok\n") << pair.err;
}

TEST(RunnerProfileWrapperCalls, ThreadsCanBeAllowed) {
  auto p = runner_policy();
  p.deny_threads = false;
  auto r = probe(p, {"thread"});
  EXPECT_EQ(r.out, "ok\n") << r.describe_end() << " " << r.err;
  EXPECT_EQ(probe(p, {"fork"}).term_signal, SIGSYS);  // a process is still not a thread
}

// --- through cutegen-sandbox, compiler profile: processes allowed, the rest EPERM ---

TEST(CompilerProfileWrapper, ProcessesWorkNetworkAndPtraceDoNot) {
  EXPECT_EQ(probe(compiler_policy(), {"fork"}).out, "ok\n");
  EXPECT_EQ(probe(compiler_policy(), {"thread"}).out, "ok\n");
  EXPECT_EQ(probe(compiler_policy(), {"socketpair"}).out, "ok\n");
  for (const char* action : {"socket-inet", "socket-udp", "ptrace", "socket-unix", "socket-netlink"}) {
    auto r = probe(compiler_policy(), {action});
    EXPECT_EQ(r.out, "denied errno=1 (Operation not permitted)\n") << action << ": " << r.err;
  }
}

TEST(CompilerProfileWrapper, CannotConnectToALocalListener) {
  Listener listener;
  auto r = probe(compiler_policy(), {"connect", std::to_string(listener.port())});
  EXPECT_EQ(r.out, "denied errno=1 (Operation not permitted)\n") << r.err;
  EXPECT_FALSE(listener.someone_connected());
}

// --- other processes: every call that names one may name only the caller ---

namespace {

const char* const kDenied = "denied errno=1 (Operation not permitted)\n";
// What a candidate tried on the worker (issue 32), and the calls of the same class: each changes the
// process it names. The signal calls send signal 0 (nothing arrives even where they succeed).
const std::vector<std::string> kChangingCalls = {"prlimit", "setpriority", "setpriority-pgrp", "affinity",
                                                 "scheduler", "param", "attr", "ioprio", "migrate-pages",
                                                 "move-pages", "robust-list", "pidfd-open", "fsetown", "kill",
                                                 "tkill", "tgkill"};
bool is_signal(const std::string& call) { return call == "kill" || call == "tkill" || call == "tgkill"; }

SandboxPolicy profile_policy(SandboxPolicy::Syscalls s) {
  SandboxPolicy p;
  p.syscalls = s;
  p.read_paths = system_reads();
  return p;
}

}  // namespace

class OtherProcesses : public ::testing::TestWithParam<SandboxPolicy::Syscalls> {};

TEST_P(OtherProcesses, CallsNamingASiblingAreRefusedAndChangeNothing) {
  Victim victim;
  const std::string before = victim.state();
  for (const auto& call : kChangingCalls) {
    auto r = probe(profile_policy(GetParam()), {"process", call, std::to_string(victim.pid())});
    // The runner profile stops a process that signals another (SIGSYS); everywhere else: EPERM.
    if (GetParam() == SandboxPolicy::Syscalls::runner && is_signal(call))
      EXPECT_EQ(r.term_signal, SIGSYS) << call << ": " << r.describe_end() << " " << r.out;
    else
      EXPECT_EQ(r.out, kDenied) << call << ": " << r.describe_end() << " " << r.err;
  }
  EXPECT_EQ(victim.state(), before);
}

TEST_P(OtherProcesses, TheParentCannotEvenBeRead) {
  for (const char* call : {"prlimit-read", "getpriority", "pidfd-open", "robust-list"}) {
    auto r = probe(profile_policy(GetParam()), {"process", call, "parent"});
    EXPECT_EQ(r.out, kDenied) << call << ": " << r.describe_end() << " " << r.err;
  }
  // Nor every process of the user at once.
  for (const char* call : {"getpriority-user", "ioprio-user"}) {
    auto r = probe(profile_policy(GetParam()), {"process", call, "0"});
    EXPECT_EQ(r.out, kDenied) << call << ": " << r.describe_end() << " " << r.err;
  }
}

TEST_P(OtherProcesses, TheSameCallsOnItselfWork) {
  for (const auto& call : kChangingCalls) {
    if (call == "setpriority-pgrp") continue;  // a group is not the caller: refused whoever asks
    std::vector<std::string> targets = {"self"};
    // kill(0) is the process group, and the runner profile traps it; tkill, tgkill and pidfd_open
    // take no 0 (EINVAL, unconfined too).
    if (!is_signal(call) && call != "pidfd-open") targets.push_back("0");
    for (const auto& target : targets) {
      auto r = probe(profile_policy(GetParam()), {"process", call, target});
      EXPECT_EQ(r.out, "ok\n") << call << " " << target << ": " << r.describe_end() << " " << r.err;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Profiles, OtherProcesses,
                         ::testing::Values(SandboxPolicy::Syscalls::compiler, SandboxPolicy::Syscalls::runner,
                                           SandboxPolicy::Syscalls::profiler),
                         [](const auto& info) { return to_string(info.param); });

// Without a filter the same probe does change the sibling: the tests above can fail.
TEST(OtherProcessesUnconfined, TheProbeReallyChangesTheSibling) {
  Victim victim;
  const std::string before = victim.state();
  for (const char* call : {"setpriority", "affinity", "prlimit"})
    EXPECT_EQ(probe(profile_policy(SandboxPolicy::Syscalls::unrestricted), {"process", call,
                                                                           std::to_string(victim.pid())}).out,
              "ok\n") << call;
  EXPECT_NE(victim.state(), before);
}

// The profiler profile (the runner under Nsight Compute) keeps threads and TCP for ncu's library.
TEST(ProfilerProfile, LeavesThreadsAndTcpOpen) {
  auto p = profile_policy(SandboxPolicy::Syscalls::profiler);
  p.confine_tcp = false;  // as the runner under ncu: Landlock leaves TCP alone
  Listener listener;
  EXPECT_EQ(probe(p, {"thread"}).out, "ok\n");
  EXPECT_EQ(probe(p, {"fork"}).out, "ok\n");
  EXPECT_EQ(probe(p, {"connect", std::to_string(listener.port())}).out, "ok\n");
  EXPECT_TRUE(listener.someone_connected());
}

// --- unix and netlink sockets ---

class LocalSockets : public ::testing::TestWithParam<SandboxPolicy::Syscalls> {};

TEST_P(LocalSockets, NoConnectToAPathSocketAndNoNetlink) {
  TempDir tmp;
  UnixListener daemon(tmp.path / "daemon.sock");
  auto r = probe(profile_policy(GetParam()), {"connect-unix", (tmp.path / "daemon.sock").string()});
  EXPECT_EQ(r.out, kDenied) << r.describe_end() << " " << r.err;
  EXPECT_FALSE(daemon.someone_connected());
  EXPECT_EQ(probe(profile_policy(GetParam()), {"socket-netlink"}).out, kDenied);
  // A connected pair of its own (no address, nothing outside) stays.
  EXPECT_EQ(probe(profile_policy(GetParam()), {"socketpair"}).out, "ok\n");
}

INSTANTIATE_TEST_SUITE_P(Profiles, LocalSockets,
                         ::testing::Values(SandboxPolicy::Syscalls::compiler, SandboxPolicy::Syscalls::runner),
                         [](const auto& info) { return to_string(info.param); });

TEST(LocalSocketsUnconfined, TheProbeReallyConnects) {
  TempDir tmp;
  UnixListener daemon(tmp.path / "daemon.sock");
  auto r = probe(profile_policy(SandboxPolicy::Syscalls::unrestricted),
                 {"connect-unix", (tmp.path / "daemon.sock").string()});
  EXPECT_EQ(r.out, "ok\n") << r.err;
  EXPECT_TRUE(daemon.someone_connected());
}

// --- Landlock ---

TEST(LandlockWrapper, WritesOnlyBeneathItsWriteDirectory) {
  REQUIRE_LANDLOCK(1);
  TempDir tmp;
  fs::create_directories(tmp.path / "out");
  auto p = compiler_policy();
  p.write_paths = {tmp.path / "out"};
  EXPECT_EQ(probe(p, {"write", (tmp.path / "out" / "ok.txt").string()}).out, "ok\n");
  auto outside = probe(p, {"write", (tmp.path / "escaped.txt").string()});
  EXPECT_EQ(outside.out, "denied errno=13 (Permission denied)\n") << outside.err;
  EXPECT_FALSE(fs::exists(tmp.path / "escaped.txt"));
  EXPECT_EQ(probe(p, {"write", "/dev/null"}).out, "ok\n");
}

TEST(LandlockWrapper, CannotReadAFileUnderAFakeHome) {
  REQUIRE_LANDLOCK(1);
  TempDir tmp;
  fs::create_directories(tmp.path / "home" / ".config");
  auto secret = tmp.path / "home" / ".config" / "key.txt";
  ASSERT_TRUE(write_file_atomic(secret, "sk-never-readable\n").ok());
  auto p = compiler_policy();
  p.write_paths = {tmp.path / "work"};
  fs::create_directories(tmp.path / "work");
  auto r = probe(p, {"read", secret.string()});
  EXPECT_EQ(r.out, "denied errno=13 (Permission denied)\n") << r.err;
  // The same probe without the sandbox reads it: the denial is the sandbox's doing.
  PosixProcessRunner runner;
  auto plain = runner.run({.argv = {kProbe.string(), "read", secret.string()}});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->out, "ok\n");
}

TEST(LandlockWrapper, TcpOnlyToTheNamedPort) {
  REQUIRE_LANDLOCK(4);
  Listener allowed, other;
  SandboxPolicy p;  // no seccomp: Landlock alone decides
  p.read_paths = system_reads();
  p.tcp_connect_ports = {allowed.port()};
  EXPECT_EQ(probe(p, {"connect", std::to_string(allowed.port())}).out, "ok\n");
  auto r = probe(p, {"connect", std::to_string(other.port())});
  EXPECT_EQ(r.out, "denied errno=13 (Permission denied)\n") << r.err;
  EXPECT_TRUE(allowed.someone_connected());
  EXPECT_FALSE(other.someone_connected());
  // With no ports named, no TCP at all.
  p.tcp_connect_ports.clear();
  EXPECT_EQ(probe(p, {"connect", std::to_string(allowed.port())}).out, "denied errno=13 (Permission denied)\n");
  // Unless TCP is left to seccomp (as under Nsight Compute); files stay confined.
  p.confine_tcp = false;
  EXPECT_EQ(probe(p, {"connect", std::to_string(other.port())}).out, "ok\n");
  TempDir tmp;
  ASSERT_TRUE(write_file_atomic(tmp.path / "f.txt", "x").ok());
  EXPECT_EQ(probe(p, {"read", (tmp.path / "f.txt").string()}).out, "denied errno=13 (Permission denied)\n");
  p.tcp_connect_ports = {allowed.port()};
  EXPECT_EQ(probe(p, {"connect", std::to_string(allowed.port())}).exit_code, 125);  // ports without confinement
}

TEST(LandlockWrapper, SignalsToProcessesOutsideTheSandboxAreRefused) {
  REQUIRE_LANDLOCK(6);
  auto r = probe(SandboxPolicy{}, {"kill-parent"});
  EXPECT_EQ(r.out, "denied errno=1 (Operation not permitted)\n") << r.err;
}

// --- everything else the wrapper sets up ---

TEST(SandboxWrapper, TheEnvironmentCarriesNoApiKey) {
  ::setenv("OPENAI_API_KEY", "sk-test-must-not-leak", 1);
  auto r = probe(compiler_policy(), {"env", "OPENAI_API_KEY"});
  EXPECT_EQ(r.out, "absent\n") << r.err;
  // The probe does see a key that is really there: the check above can fail.
  auto leaked = probe(compiler_policy(), {"env", "OPENAI_API_KEY"}, {.environment = ProcessSpec::Environment::inherit});
  EXPECT_EQ(leaked.out, "present\n");
  ::unsetenv("OPENAI_API_KEY");
}

TEST(SandboxWrapper, AddressSpaceLimitStopsAGreedyProgram) {
  auto p = compiler_policy();
  p.address_space_bytes = 256ull << 20;
  EXPECT_EQ(probe(p, {"alloc", std::to_string(512ull << 20)}).out, "denied errno=12 (Cannot allocate memory)\n");
  EXPECT_EQ(probe(p, {"alloc", std::to_string(16ull << 20)}).out, "ok\n");
}

TEST(SandboxWrapper, ExitCodesLikeAShell) {
  PosixProcessRunner runner;
  auto missing = runner.run({.argv = {kWrapper.string(), "--", "/no/such/program"}});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->exit_code, 127);
  EXPECT_NE(missing->err.find("/no/such/program: not found"), std::string::npos) << missing->err;
  TempDir tmp;
  auto not_exec = tmp.path / "data.txt";
  ASSERT_TRUE(write_file_atomic(not_exec, "x").ok());
  auto cannot = runner.run({.argv = {kWrapper.string(), "--", not_exec.string()}});
  ASSERT_TRUE(cannot.ok());
  EXPECT_EQ(cannot->exit_code, 126);
  auto bad = runner.run({.argv = {kWrapper.string(), "--read", "/no/such/dir", "--", "true"}});
  ASSERT_TRUE(bad.ok());
  if (have_landlock()) {
    EXPECT_EQ(bad->exit_code, 125);
    EXPECT_NE(bad->err.find("/no/such/dir"), std::string::npos) << bad->err;
  }
  auto usage = runner.run({.argv = {kWrapper.string(), "--syscalls", "nope", "--", "true"}});
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->exit_code, 125);
  EXPECT_EQ(std::count(usage->err.begin(), usage->err.end(), '\n'), 1) << usage->err;
}

// The wrapped program dies when the process that started it is killed. A supervisor (child subreaper)
// starts a middle process, which starts the wrapper; the middle one is killed; the wrapped probe,
// reparented to the supervisor, must end by SIGKILL.
TEST(SandboxWrapper, DiesWithItsParent) {
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t supervisor = ::fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t middle = ::fork();
    if (middle == 0) {
      pid_t wrapped = ::fork();
      if (wrapped == 0) {
        ::dup2(out[1], 1);
        ::execl(kWrapper.c_str(), kWrapper.c_str(), "--", kProbe.c_str(), "sleep", "30", static_cast<char*>(nullptr));
        ::_exit(99);
      }
      ::pause();
      ::_exit(0);
    }
    ::close(out[1]);
    char buf[32] = {};
    if (::read(out[0], buf, sizeof buf - 1) <= 0) ::_exit(10);  // the probe is running, sandboxed
    pid_t probe_pid = std::atoi(buf);
    ::kill(middle, SIGKILL);
    ::waitpid(middle, nullptr, 0);
    for (int i = 0; i < 500; ++i) {
      int status = 0;
      if (::waitpid(probe_pid, &status, WNOHANG) == probe_pid)
        ::_exit(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 11);
      std::this_thread::sleep_for(10ms);
    }
    ::kill(probe_pid, SIGKILL);
    ::_exit(12);  // still alive 5 s after its parent died
  }
  ::close(out[0]);
  ::close(out[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: the probe never started; 11: it ended otherwise; 12: it outlived its parent";
}

// --- in-process, as the runner applies it: forked children call apply_sandbox(runner) ---

namespace {

struct Confined {
  int status = 0;
  std::string report;  // what the SIGSYS handler wrote to violation_fd, or apply_sandbox's error
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Runs `action` in a forked child after apply_sandbox(policy); the child exits with action's result.
Confined confined(SandboxPolicy policy, const std::function<int()>& action,
                  const std::function<void()>& before = [] {}) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe(pipe_fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    before();
    policy.violation_fd = pipe_fds[1];
    auto r = apply_sandbox(policy);
    if (!r) {
      ssize_t ignored = ::write(pipe_fds[1], r.error().message.data(), r.error().message.size());
      (void)ignored;
      ::_exit(125);
    }
    ::_exit(action());
  }
  ::close(pipe_fds[1]);
  Confined c;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) c.report.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  ::waitpid(pid, &c.status, 0);
  return c;
}

void* nothing(void*) { return nullptr; }
int errno_is(bool failed, int expected) { return failed && errno == expected ? 0 : 1; }

}  // namespace

TEST(RunnerProfileInProcess, ForkExecAndNetworkAreTrappedAndNamed) {
  auto p = runner_policy();
  struct Case {
    std::function<int()> action;
    std::string report;
  };
  std::vector<Case> cases = {
      {[] { return ::fork() >= 0 ? 0 : 2; }, "sandbox: clone (process)\n"},
      {[] { return ::syscall(SYS_fork) >= 0 ? 0 : 2; }, "sandbox: fork\n"},
      {[] { return ::syscall(SYS_vfork) >= 0 ? 0 : 2; }, "sandbox: vfork\n"},
      {[] { ::execl("/bin/true", "true", static_cast<char*>(nullptr)); return 2; }, "sandbox: execve\n"},
      {[] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 2; }, "sandbox: socket (AF_INET)\n"},
      {[] { return ::socket(AF_INET6, SOCK_DGRAM, 0) >= 0 ? 0 : 2; }, "sandbox: socket (AF_INET6)\n"},
      {[] { return ::socket(AF_PACKET, SOCK_RAW, 0) >= 0 ? 0 : 2; }, "sandbox: socket (family 17)\n"},
      {[] { return ::kill(::getppid(), 0); }, fmt::format("sandbox: kill (pid {})\n", ::getpid())},
      // Signal 0 only checks: if the filter failed, nothing is sent to anyone.
      {[] { return ::kill(-1, 0); }, "sandbox: kill (pid -1)\n"},
      {[] { return static_cast<int>(::syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0)); }, "sandbox: ptrace\n"},
  };
  for (const auto& c : cases) {
    auto r = confined(p, c.action);
    EXPECT_EQ(r.exit_code(), 97) << r.report;
    EXPECT_EQ(r.report, c.report);
  }
}

TEST(RunnerProfileInProcess, ThreadsHandlersAndTimersFailWithEperm) {
  auto p = runner_policy();
  std::vector<std::pair<const char*, std::function<int()>>> cases = {
      {"sigaction", [] { struct sigaction sa {}; sa.sa_handler = SIG_IGN; return errno_is(::sigaction(SIGUSR1, &sa, nullptr) != 0, EPERM); }},
      {"read sigaction", [] { struct sigaction old {}; return ::sigaction(SIGUSR1, nullptr, &old) == 0 ? 0 : 1; }},
      {"setitimer", [] { itimerval v{{0, 0}, {1, 0}}; return errno_is(::setitimer(ITIMER_REAL, &v, nullptr) != 0, EPERM); }},
      {"alarm", [] { return errno_is(::syscall(SYS_alarm, 5) != 0, EPERM); }},
      {"timer_create", [] { long id; return errno_is(::syscall(SYS_timer_create, CLOCK_MONOTONIC, nullptr, &id) != 0, EPERM); }},
      {"dumpable", [] { return errno_is(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0, EPERM); }},
      {"pdeathsig", [] { return errno_is(::prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) != 0, EPERM); }},
      {"io_uring", [] { return errno_is(::syscall(SYS_io_uring_setup, 8, nullptr) != 0, EPERM); }},
      {"unshare", [] { return errno_is(::unshare(CLONE_NEWUSER) != 0, EPERM); }},
      {"clone3", [] { return errno_is(::syscall(SYS_clone3, nullptr, 0) != 0, ENOSYS); }},
      {"thread", [] { pthread_t t; errno = ::pthread_create(&t, nullptr, nothing, nullptr); return errno_is(errno != 0, EPERM); }},
      {"prctl name is fine", [] { return ::prctl(PR_SET_NAME, "runner", 0, 0, 0); }},
      {"signal to itself", [] { return ::kill(::getpid(), 0); }},
  };
  for (const auto& [name, action] : cases) {
    auto r = confined(p, action);
    EXPECT_EQ(r.exit_code(), 0) << name << ": " << r.report;
  }
}

TEST(RunnerProfileInProcess, ThreadsThatExistedBeforeAreFilteredToo) {
  // CUDA has started threads by the time the runner confines itself.
  std::atomic<bool> go{false};
  std::thread* early = nullptr;
  auto r = confined(runner_policy(), [&] {
    go = true;
    early->join();
    return 0;
  }, [&] {
    early = new std::thread([&] {
      while (!go) std::this_thread::sleep_for(1ms);
      (void)::socket(AF_INET, SOCK_STREAM, 0);
    });
  });
  EXPECT_EQ(r.exit_code(), 97);
  EXPECT_EQ(r.report, "sandbox: socket (AF_INET)\n");
}

TEST(RunnerProfileInProcess, ThreadsAllowedWhenAsked) {
  auto p = runner_policy();
  p.deny_threads = false;
  auto r = confined(p, [] {
    pthread_t t;
    if (::pthread_create(&t, nullptr, nothing, nullptr) != 0) return 1;
    return ::pthread_join(t, nullptr);
  });
  EXPECT_EQ(r.exit_code(), 0) << r.report;
}

TEST(RunnerProfileInProcess, WritesOutsideItsDirectoryAreRefused) {
  REQUIRE_LANDLOCK(1);
  TempDir tmp;
  fs::create_directories(tmp.path / "private");
  auto p = runner_policy();
  p.write_paths = {tmp.path / "private"};
  auto inside = (tmp.path / "private" / "result.json").string();
  auto outside = (tmp.path / "planted.txt").string();
  auto r = confined(p, [&] {
    if (::open(inside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644) < 0) return 1;
    return errno_is(::open(outside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644) < 0, EACCES);
  });
  EXPECT_EQ(r.exit_code(), 0) << r.report;
  EXPECT_FALSE(fs::exists(outside));
}

// As cutegen-runner does it: files confined before CUDA starts its threads, then the system-call
// filter (no paths) once CUDA is up. The second step must not take away what the first allowed.
TEST(RunnerProfileInProcess, InTwoStepsFilesFirstThenTheFilter) {
  REQUIRE_LANDLOCK(1);
  TempDir tmp;
  fs::create_directories(tmp.path / "private");
  auto readable = kProbe.string();
  auto outside = (tmp.path / "planted.txt").string();
  SandboxPolicy files;
  files.read_paths = system_reads();
  files.write_paths = {tmp.path / "private"};
  SandboxPolicy filter;
  filter.syscalls = SandboxPolicy::Syscalls::runner;
  filter.die_with_parent = false;
  auto r = confined(filter, [&] {
    if (::open(readable.c_str(), O_RDONLY | O_CLOEXEC) < 0) return 1;  // e.g. dlopen of the candidate
    if (errno_is(::open(outside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644) < 0, EACCES) != 0) return 2;
    return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 3 : 4;
  }, [&] {
    if (!apply_sandbox(files)) ::_exit(124);
  });
  EXPECT_EQ(r.exit_code(), 97) << r.report;
  EXPECT_EQ(r.report, "sandbox: socket (AF_INET)\n");
  EXPECT_FALSE(fs::exists(outside));
}

TEST(RunnerProfileInProcess, RlimitsAreSetAndCoreDumpsOff) {
  auto p = runner_policy();
  p.open_files = 64;
  p.file_size_bytes = 1 << 20;
  p.cpu_seconds = 100;
  auto r = confined(p, [] {
    rlimit core{}, files{}, fsize{}, cpu{};
    ::getrlimit(RLIMIT_CORE, &core);
    ::getrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_FSIZE, &fsize);
    ::getrlimit(RLIMIT_CPU, &cpu);
    bool ok = core.rlim_max == 0 && files.rlim_cur == 64 && fsize.rlim_cur == (1 << 20) && cpu.rlim_cur == 100;
    return ok && ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 1;
  });
  EXPECT_EQ(r.exit_code(), 0) << r.report;
}

// Compiles must leave the CPU to the judge's timing processes; what they start inherits it, and an
// unprivileged process cannot take the priority back (root can: the sandbox does not drop CAP_SYS_NICE).
TEST(CompilerProfileInProcess, BackgroundIsNiceNineteenBatchForChildrenToo) {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::compiler;
  p.background = true;
  auto r = confined(p, [] {
    auto lowered = [] {
      errno = 0;
      int nice = ::getpriority(PRIO_PROCESS, 0);
      return errno == 0 && nice == 19 && ::sched_getscheduler(0) == SCHED_BATCH;
    };
    if (!lowered()) return 1;
    pid_t child = ::fork();
    if (child == 0) ::_exit(lowered() ? 0 : 1);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 2;
    // Raising it back needs CAP_SYS_NICE, which root has (CI runs as root): checked only without it.
    if (::geteuid() != 0 && ::setpriority(PRIO_PROCESS, 0, 0) == 0) return 3;
    return 0;
  });
  EXPECT_EQ(r.exit_code(), 0) << r.report;
}

// Threads: a call that names a thread started after the filter by its TID (pthread_setaffinity_np,
// pthread_setschedparam) is refused with EPERM, not a kill; a thread naming itself (0) and the main
// thread (its TID is the pid) still work.
TEST(CompilerProfileInProcess, ALaterThreadNamedByItsTidIsRefusedButNamesItselfFreely) {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::compiler;
  auto r = confined(p, [] {
    cpu_set_t cpus;
    if (::sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 1;
    std::atomic<int> self_rc{-1};
    std::atomic<bool> done{false};
    std::thread t([&] {
      self_rc = ::sched_setaffinity(0, sizeof cpus, &cpus);
      while (!done) std::this_thread::sleep_for(1ms);
    });
    while (self_rc == -1) std::this_thread::sleep_for(1ms);
    int by_tid = ::pthread_setaffinity_np(t.native_handle(), sizeof cpus, &cpus);
    int main_by_pid = ::sched_setaffinity(::getpid(), sizeof cpus, &cpus);
    done = true;
    t.join();
    if (self_rc != 0) return 2;
    if (by_tid != EPERM) return 3;
    return main_by_pid == 0 ? 0 : 4;
  });
  EXPECT_EQ(r.exit_code(), 0) << "2: a thread could not name itself; 3: another thread's TID was not refused; "
                                 "4: the main thread could not be named by the pid. " << r.report;
}

// Threads that exist when the filter loads (CUDA's, in the runner) may still be named by TID.
TEST(RunnerProfileInProcess, ThreadsThatExistedBeforeCanBeNamedByTid) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread* early = nullptr;
  auto r = confined(runner_policy(), [&] {
    cpu_set_t cpus;
    if (::sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 1;
    int rc = ::sched_setaffinity(tid, sizeof cpus, &cpus);
    errno = 0;
    int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid.load()));
    if (errno != 0) return 3;
    int prio = ::setpriority(PRIO_PROCESS, static_cast<id_t>(tid.load()), nice);
    done = true;
    early->join();
    return rc == 0 && prio == 0 ? 0 : 2;
  }, [&] {
    early = new std::thread([&] {
      tid = static_cast<pid_t>(::syscall(SYS_gettid));
      while (!done) std::this_thread::sleep_for(1ms);
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
  });
  EXPECT_EQ(r.exit_code(), 0) << r.report;
}

// More threads than the filter can name is an error that says so, not a filter that names too few.
TEST(RunnerProfileInProcess, TooManyThreadsToNameIsAnError) {
  std::atomic<bool> done{false};
  std::vector<std::thread>* many = nullptr;
  auto r = confined(runner_policy(), [] { return 0; }, [&] {
    many = new std::vector<std::thread>;
    for (int i = 0; i < 70; ++i)
      many->emplace_back([&] { while (!done) std::this_thread::sleep_for(1ms); });
  });
  EXPECT_EQ(r.exit_code(), 125);
  EXPECT_NE(r.report.find("more than the 63 it can name"), std::string::npos) << r.report;
}

TEST(CompilerProfileInProcess, WithoutBackgroundThePriorityIsLeftAlone) {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::compiler;
  int before = ::getpriority(PRIO_PROCESS, 0);
  int policy_before = ::sched_getscheduler(0);
  auto r = confined(p, [before, policy_before] {
    return ::getpriority(PRIO_PROCESS, 0) == before && ::sched_getscheduler(0) == policy_before ? 0 : 1;
  });
  EXPECT_EQ(r.exit_code(), 0) << r.report;
}

TEST(RunnerProfileInProcess, AParentAlreadyGoneEndsTheProcess) {
  SandboxPolicy p;
  p.expected_parent = 1;  // not our parent: as if ours had died and we were reparented
  auto r = confined(p, [] { return 0; });
  EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL) << r.status;
}

TEST(SandboxSupportProbe, ReportsWhatThisKernelOffers) {
  auto s = probe_sandbox_support();
  EXPECT_TRUE(s.seccomp) << s.seccomp_detail;  // every kernel CI runs on has seccomp filters
  EXPECT_NE(s.seccomp_detail.find("libseccomp"), std::string::npos);
  EXPECT_TRUE(s.no_new_privs);
  EXPECT_EQ(s.landlock_abi, landlock::abi_version());
  EXPECT_FALSE(s.landlock_detail.empty());
}

// --- nvcc under the compiler profile (CI has nvcc) ---

class NvccUnderSandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    auto nvcc = find_executable("nvcc");
    if (!nvcc) GTEST_SKIP() << "no nvcc on PATH";
    nvcc_ = fs::canonical(*nvcc);
    policy_.syscalls = SandboxPolicy::Syscalls::compiler;
    policy_.read_paths = {nvcc_.parent_path().parent_path(), fs::path(CUTEGEN_SOURCE_DIR) / "include",
                          fs::canonical(CUTEGEN_CUTLASS_INCLUDE_DIR)};
    for (const char* p : {"/usr", "/lib", "/lib64", "/etc", "/proc", "/sys", "/dev"})
      if (fs::exists(p)) policy_.read_paths.push_back(p);
    policy_.write_paths = {stage_.path};
    policy_.address_space_bytes = 16ull << 30;
  }

  ProcessResult nvcc(const std::string& source) {
    EXPECT_TRUE(write_file_atomic(stage_.path / "candidate.cu", source).ok());
    std::vector<std::string> cmd = {nvcc_.string(), "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-O3",
                                    "--expt-relaxed-constexpr", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                                    "-I" + (fs::path(CUTEGEN_SOURCE_DIR) / "include").string(),
                                    "-I" + std::string(CUTEGEN_CUTLASS_INCLUDE_DIR), "candidate.cu", "-o", "kernel.so"};
    PosixProcessRunner runner;
    auto r = runner.run({.argv = sandbox_command(kWrapper, policy_, cmd), .timeout = 600s, .cwd = stage_.path,
                         .private_dir = stage_.path});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : ProcessResult{};
  }

  fs::path nvcc_;
  TempDir stage_;
  SandboxPolicy policy_;
};

TEST_F(NvccUnderSandbox, CompilesTheReluExample) {
  auto source = read_file(fs::path(CUTEGEN_SOURCE_DIR) / "attacks/honest/relu_vec.cu");
  ASSERT_TRUE(source.ok());
  auto r = nvcc(*source);
  EXPECT_TRUE(r.succeeded()) << r.describe_end() << "\n" << r.out << r.err;
  EXPECT_TRUE(fs::exists(stage_.path / "kernel.so"));
}

TEST_F(NvccUnderSandbox, AnIncludeOfAFileUnderHomeFailsWithoutQuotingIt) {
  REQUIRE_LANDLOCK(1);
  TempDir home;
  auto secret = home.path / ".env";
  ASSERT_TRUE(write_file_atomic(secret, "OPENAI_API_KEY=sk-must-not-appear\n").ok());
  auto r = nvcc(fmt::format("#include \"{}\"\nint x;\n", secret.string()));
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ((r.out + r.err).find("sk-must-not-appear"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find(".env"), std::string::npos) << r.out << r.err;  // it failed on the include
}
