// Test helper: tries one thing a hostile candidate would, and says how it went.
//   sandbox_probe ACTION [ARG]
// Prints "ok" (exit 0) when the action worked, "denied errno=N (text)" (exit 1) when the system
// refused it, and exits 2 on a usage error. A seccomp trap ends it before it can print anything.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
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
