// Test helper: tries one thing a hostile candidate would, and says how it went.
//   sandbox_probe ACTION [ARG]
//   sandbox_probe process CALL TARGET   (TARGET: a pid, "self", "0" or "parent")
// Prints "ok" (exit 0) when the action worked, "denied errno=N (text)" (exit 1) when the system
// refused it, and exits 2 on a usage error. A seccomp trap ends it before it can print anything.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int report(bool ok) {
  if (ok) {
    std::printf("ok\n");
    return 0;
  }
  std::printf("denied errno=%d (%s)\n", errno, std::strerror(errno));
  return 1;
}

void* thread_body(void*) { return nullptr; }
void on_usr1(int) {}

// sched_setattr's argument (linux/sched/types.h is missing from older headers).
struct SchedAttr {
  uint32_t size, sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
};

constexpr int kIoprioWhoProcess = 1, kIoprioWhoUser = 3, kIoprioClassIdle = 3;

// What a candidate would do to another process, done to `pid`. The same call on the probe itself
// (self, 0) must still work. Signals carry signal 0: a check that sends nothing.
int process_call(const std::string& call, pid_t pid) {
  if (call == "prlimit") {  // a CPU limit of 100 s: the process is killed once it has used that much
    rlimit cpu{100, 100};
    return report(::prlimit(pid, RLIMIT_CPU, &cpu, nullptr) == 0);
  }
  if (call == "prlimit-read") {
    rlimit old{};
    return report(::prlimit(pid, RLIMIT_NOFILE, nullptr, &old) == 0);
  }
  if (call == "setpriority") return report(::setpriority(PRIO_PROCESS, static_cast<id_t>(pid), 19) == 0);
  if (call == "setpriority-pgrp") return report(::setpriority(PRIO_PGRP, static_cast<id_t>(pid), 19) == 0);
  if (call == "getpriority") {
    errno = 0;
    ::getpriority(PRIO_PROCESS, static_cast<id_t>(pid));
    return report(errno == 0);
  }
  if (call == "getpriority-user") {  // every process of the user (pid unused)
    errno = 0;
    ::getpriority(PRIO_USER, 0);
    return report(errno == 0);
  }
  if (call == "affinity") {  // pinned to the first CPU this probe may use
    cpu_set_t mine, one;
    CPU_ZERO(&one);
    if (::sched_getaffinity(0, sizeof mine, &mine) != 0) return report(false);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mine)) {
        CPU_SET(c, &one);
        break;
      }
    return report(::sched_setaffinity(pid, sizeof one, &one) == 0);
  }
  if (call == "scheduler") {
    sched_param none{};
    return report(::sched_setscheduler(pid, SCHED_IDLE, &none) == 0);
  }
  if (call == "param") {
    sched_param p{};
    p.sched_priority = 0;
    return report(::sched_setparam(pid, &p) == 0);
  }
  if (call == "attr") {
    SchedAttr a{};
    a.size = sizeof a;
    a.sched_policy = SCHED_IDLE;
    return report(::syscall(SYS_sched_setattr, pid, &a, 0) == 0);
  }
  if (call == "ioprio") {
    return report(::syscall(SYS_ioprio_set, kIoprioWhoProcess, pid, (kIoprioClassIdle << 13) | 0) == 0);
  }
  if (call == "ioprio-user") return report(::syscall(SYS_ioprio_get, kIoprioWhoUser, 0) >= 0);
  if (call == "migrate-pages") {
    unsigned long nodes = 1;
    return report(::syscall(SYS_migrate_pages, pid, 8 * sizeof nodes, &nodes, &nodes) >= 0);
  }
  if (call == "move-pages") return report(::syscall(SYS_move_pages, pid, 0, nullptr, nullptr, nullptr, 0) == 0);
  if (call == "robust-list") {
    void* head = nullptr;
    size_t len = 0;
    return report(::syscall(SYS_get_robust_list, pid, &head, &len) == 0);
  }
  if (call == "pidfd-open") return report(::syscall(SYS_pidfd_open, pid, 0) >= 0);
  if (call == "fsetown") {  // SIGIO for this pipe would go to `pid`
    int fds[2];
    if (::pipe(fds) != 0) return report(false);
    return report(::fcntl(fds[0], F_SETOWN, pid) == 0);
  }
  if (call == "kill") return report(::kill(pid, 0) == 0);
  if (call == "tkill") return report(::syscall(SYS_tkill, pid, 0) == 0);
  if (call == "tgkill") return report(::syscall(SYS_tgkill, pid, pid, 0) == 0);
  std::fprintf(stderr, "unknown process call %s\n", call.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string action = argv[1];
  const char* arg = argc > 2 ? argv[2] : "";
  if (action == "fork") {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    return report(pid > 0);
  }
  if (action == "exec") {
    ::execl("/bin/true", "true", static_cast<char*>(nullptr));
    return report(false);
  }
  if (action == "thread") {
    pthread_t t;
    int rc = ::pthread_create(&t, nullptr, thread_body, nullptr);
    if (rc == 0) ::pthread_join(t, nullptr);
    errno = rc;
    return report(rc == 0);
  }
  if (action == "socket-inet") return report(::socket(AF_INET, SOCK_STREAM, 0) >= 0);
  if (action == "socket-udp") return report(::socket(AF_INET, SOCK_DGRAM, 0) >= 0);
  if (action == "socket-unix") return report(::socket(AF_UNIX, SOCK_STREAM, 0) >= 0);
  if (action == "socketpair") {
    int fds[2];
    return report(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  }
  // The socket that lists every TCP connection of the host (ss(8) reads it).
  if (action == "socket-netlink") return report(::socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG) >= 0);
  if (action == "connect-unix") {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return report(false);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", arg);
    return report(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  if (action == "process" && argc > 3) {
    std::string target = argv[3];
    pid_t pid = target == "self" ? ::getpid() : target == "parent" ? ::getppid() : static_cast<pid_t>(std::atoi(argv[3]));
    return process_call(arg, pid);
  }
  if (action == "connect") {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return report(false);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(arg)));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return report(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  if (action == "write") {
    int fd = ::open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    return report(fd >= 0 && ::write(fd, "x", 1) == 1);
  }
  if (action == "read") {
    int fd = ::open(arg, O_RDONLY);
    char c;
    return report(fd >= 0 && ::read(fd, &c, 1) >= 0);
  }
  if (action == "env") {
    std::printf("%s\n", std::getenv(arg) ? "present" : "absent");
    return 0;
  }
  if (action == "sleep") {
    std::printf("%d\n", static_cast<int>(::getpid()));
    std::fflush(stdout);
    ::sleep(static_cast<unsigned>(std::atoi(arg)));
    return 0;
  }
  if (action == "sigaction") {
    struct sigaction sa {};
    sa.sa_handler = on_usr1;
    return report(::sigaction(SIGUSR1, &sa, nullptr) == 0);
  }
  if (action == "kill-parent") return report(::kill(::getppid(), 0) == 0);  // signal 0: a check, nothing sent
  // A pid that does not exist: unconfined this fails with ESRCH, so EPERM is the sandbox's answer,
  // and a broken sandbox stops nobody.
  if (action == "ptrace") return report(::ptrace(PTRACE_ATTACH, 0x3fffffff, nullptr, nullptr) == 0);
  if (action == "setsid") return report(::setsid() >= 0);
  if (action == "dumpable") return report(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
  if (action == "alloc") {
    std::size_t bytes = std::strtoull(arg, nullptr, 10);
    void* p = std::malloc(bytes);
    if (p) std::memset(p, 1, bytes);
    if (!p) errno = ENOMEM;
    return report(p != nullptr);
  }
  return 2;
}
