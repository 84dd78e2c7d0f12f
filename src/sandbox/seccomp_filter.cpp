#include "sandbox/seccomp_filter.h"

#include <seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sandbox/process_filter.h"

namespace cutegen::seccomp_filter {
namespace {

// prctl options newer than some headers.
constexpr uint64_t kPrSetPtracer = 0x59616d61;
constexpr uint64_t kPrSetSyscallUserDispatch = 59;
constexpr uint64_t kPrSetMm = 35;
constexpr uint64_t kPrCapAmbient = 47;
constexpr uint64_t kPrSetChildSubreaper = 36;
constexpr uint64_t kPrSetIoFlusher = 57;

struct Rule {
  const char* name;
  uint32_t action;
  std::vector<scmp_arg_cmp> conditions;  // all must hold (AND)
};

// --- the SIGSYS handler: async-signal-safe, names the call from a table filled before the filter loads ---
enum class Detail { none, clone_kind, socket_family, target_pid };  // what the first argument adds
struct Trap {
  int nr;
  const char* name;
  Detail detail;
};
constexpr int kMaxTraps = 64;
Trap g_traps[kMaxTraps];
int g_trap_count = 0;
int g_violation_fd = 2;

Detail detail_for(const char* name) {
  std::string n = name;
  if (n == "clone") return Detail::clone_kind;
  if (n == "socket") return Detail::socket_family;
  if (n == "kill" || n == "tkill" || n == "tgkill" || n == "rt_sigqueueinfo" || n == "rt_tgsigqueueinfo")
    return Detail::target_pid;
  return Detail::none;
}

class Line {
 public:
  Line& add(const char* s) {
    while (*s && n_ + 1 < sizeof buf_) buf_[n_++] = *s++;
    return *this;
  }
  Line& add(long v) {
    if (v < 0) add("-");
    unsigned long u = v < 0 ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
    char digits[24];
    int k = 0;
    do { digits[k++] = static_cast<char>('0' + u % 10); u /= 10; } while (u && k < 24);
    while (k && n_ + 1 < sizeof buf_) buf_[n_++] = digits[--k];
    return *this;
  }
  void write_to(int fd) {
    buf_[n_++] = '\n';
    ssize_t ignored = ::write(fd, buf_, n_);
    (void)ignored;
  }

 private:
  char buf_[160];
  std::size_t n_ = 0;
};

void on_sigsys(int, siginfo_t* info, void* context) {
  const Trap* trap = nullptr;
  for (int i = 0; i < g_trap_count; ++i)
    if (g_traps[i].nr == info->si_syscall) trap = &g_traps[i];
  Line line;
  line.add("sandbox: ");
  if (!trap) {
    line.add("system call ").add(static_cast<long>(info->si_syscall));
  } else {
    line.add(trap->name);
#if defined(__x86_64__)
    auto* uc = static_cast<ucontext_t*>(context);
    long arg0 = static_cast<long>(uc->uc_mcontext.gregs[REG_RDI]);
    switch (trap->detail) {
      case Detail::clone_kind: line.add((arg0 & CLONE_THREAD) ? " (thread)" : " (process)"); break;
      case Detail::socket_family:
        if (arg0 == AF_INET) line.add(" (AF_INET)");
        else if (arg0 == AF_INET6) line.add(" (AF_INET6)");
        else line.add(" (family ").add(arg0).add(")");
        break;
      case Detail::target_pid: line.add(" (pid ").add(static_cast<long>(static_cast<int>(arg0))).add(")"); break;
      case Detail::none: break;
    }
#else
    (void)context;
#endif
  }
  line.write_to(g_violation_fd);
  ::_exit(kViolationExit);
}

// Calls no compiler, build tool or kernel ever needs, and that reach outside the process's own files.
std::vector<Rule> privileged_rules(uint32_t deny) {
  std::vector<Rule> r;
  for (const char* name :
       {"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
        "open_tree", "mount_setattr", "bpf", "keyctl", "add_key", "request_key", "perf_event_open", "setns",
        "unshare", "kexec_load", "kexec_file_load", "reboot", "init_module", "finit_module", "delete_module",
        "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl",
        "ioperm", "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "quotactl", "quotactl_fd",
        "syslog", "vhangup", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "uselib",
        "sethostname", "setdomainname", "process_madvise", "fanotify_init", "kcmp", "modify_ldt", "seccomp"})
    r.push_back({name, deny, {}});
  // Only the query form of personality (it could turn off address-space randomisation).
  r.push_back({"personality", deny, {SCMP_A0(SCMP_CMP_NE, 0xffffffffu)}});
  return r;
}

// Reaching other processes' memory or the network. Sockets: none but those of socketpair (unix
// sockets without an address) and, with `tcp`, TCP streams on IPv4/IPv6, which Landlock then restricts
// by port (Nsight Compute's injected library). libseccomp takes one comparison per argument and rule,
// so "any other family" is spelled as the families below 17 one by one plus everything from 17 up
// (which also catches garbage in the upper bits).
std::vector<Rule> hostile_rules(uint32_t act, bool tcp) {
  std::vector<Rule> r;
  for (const char* name : {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"}) r.push_back({name, act, {}});
  static_assert(AF_UNIX == 1 && AF_INET == 2 && AF_INET6 == 10 && AF_NETLINK == 16);
  for (uint64_t family = 0; family < AF_NETLINK; ++family) {
    if (family == AF_UNIX) continue;
    if (tcp && (family == AF_INET || family == AF_INET6)) continue;
    r.push_back({"socket", act, {SCMP_A0(SCMP_CMP_EQ, family)}});
  }
  r.push_back({"socket", act, {SCMP_A0(SCMP_CMP_GT, uint64_t{AF_NETLINK})}});
  // A unix socket reaches whatever listens on a path (the Docker daemon, the session's D-Bus, an X
  // server) and a filter cannot see connect's address; netlink's sock_diag lists every socket of the
  // host. Nothing nvcc or the runner does after confining itself creates either (docs/sandbox.md),
  // while glibc may try (syslog, nscd, getaddrinfo) and copes with a refusal: EPERM, never a trap.
  for (uint64_t family : {AF_UNIX, AF_NETLINK})
    r.push_back({"socket", SCMP_ACT_ERRNO(EPERM), {SCMP_A0(SCMP_CMP_EQ, family)}});
  if (tcp) {
    // Landlock sees TCP only: no UDP, raw or other socket types on IP.
    for (uint64_t family : {AF_INET, AF_INET6})
      for (uint64_t type : {SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET})
        r.push_back({"socket", act, {SCMP_A0(SCMP_CMP_EQ, family), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, type)}});
  }
  return r;
}

std::vector<Rule> compiler_rules(const SandboxPolicy& p) {
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  auto r = privileged_rules(deny);
  auto h = hostile_rules(deny, !p.tcp_connect_ports.empty());
  r.insert(r.end(), h.begin(), h.end());
  // Processes yes (nvcc runs cicc, ptxas, gcc ...), new namespaces no, and no child handed to our
  // parent (CLONE_PARENT: cutegen would reap a process it never started).
  for (uint64_t flag : {CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS,
                        CLONE_NEWCGROUP, CLONE_PARENT})
    r.push_back({"clone", deny, {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)}});
  r.push_back({"clone3", SCMP_ACT_ERRNO(ENOSYS), {}});  // its flags sit in memory; glibc falls back to clone
  return r;
}

std::vector<Rule> runner_rules(const SandboxPolicy& p) {
  const uint32_t trap = SCMP_ACT_TRAP;
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  auto r = privileged_rules(deny);
  auto h = hostile_rules(trap, !p.tcp_connect_ports.empty());
  r.insert(r.end(), h.begin(), h.end());
  // No new processes, and no threads unless allowed: after a call returns, no host code of the candidate runs.
  for (const char* name : {"fork", "vfork", "execveat"}) r.push_back({name, trap, {}});
  if (p.allowed_execve_path)
    r.push_back({"execve", trap, {SCMP_A0(SCMP_CMP_NE, reinterpret_cast<uint64_t>(p.allowed_execve_path))}});
  else
    r.push_back({"execve", trap, {}});
  // A thread is refused with EPERM rather than trapped: a library (CUDA) starting one can report the
  // failure, and glibc blocks every signal around pthread_create's clone, so a trap could not be
  // named anyway (a blocked SIGSYS makes the kernel kill the process instead).
  r.push_back({"clone", trap, {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)}});
  if (p.deny_threads) r.push_back({"clone", deny, {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)}});
  r.push_back({"clone3", SCMP_ACT_ERRNO(ENOSYS), {}});
  // Signals only to itself (the process filter refuses the rest with EPERM; a trap here names the intent).
  const auto self = static_cast<uint64_t>(::getpid());
  for (const char* name : {"kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"})
    r.push_back({name, trap, {SCMP_A0(SCMP_CMP_NE, self)}});
  r.push_back({"pidfd_send_signal", trap, {}});
  // Ways to run code later, outside a call, or to leave the process group; a library probing them copes.
  r.push_back({"rt_sigaction", deny, {SCMP_A1(SCMP_CMP_NE, 0)}});  // reading a handler is fine
  // Leaving the process group is how a process outlives the judge's kill: hostile, so trapped.
  for (const char* name : {"setsid", "setpgid"}) r.push_back({name, trap, {}});
  for (const char* name : {"timer_create", "setitimer", "alarm"}) r.push_back({name, deny, {}});
  for (uint64_t option : {uint64_t{PR_SET_DUMPABLE}, uint64_t{PR_SET_PDEATHSIG}, uint64_t{PR_SET_SECCOMP},
                          uint64_t{PR_SET_SECUREBITS}, uint64_t{PR_SET_KEEPCAPS}, kPrSetPtracer, kPrSetMm,
                          kPrCapAmbient, kPrSetChildSubreaper, kPrSetSyscallUserDispatch, kPrSetIoFlusher})
    r.push_back({"prctl", deny, {SCMP_A0(SCMP_CMP_EQ, option)}});
  return r;
}

class Context {
 public:
  Context() : ctx_(seccomp_init(SCMP_ACT_ALLOW)) {}
  ~Context() { if (ctx_) seccomp_release(ctx_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  scmp_filter_ctx get() const { return ctx_; }

 private:
  scmp_filter_ctx ctx_;
};

Status fail(const std::string& what, int rc) {
  return Error{fmt::format("sandbox: seccomp: {}: {}", what, std::strerror(-rc))};
}

}  // namespace

std::string library_version() {
  const scmp_version* v = seccomp_version();
  return v ? fmt::format("{}.{}.{}", v->major, v->minor, v->micro) : "unknown";
}

Status install(const SandboxPolicy& policy, const std::vector<pid_t>& threads) {
  if (policy.syscalls == SandboxPolicy::Syscalls::unrestricted) return ok_status();
  // Other processes are out of reach in every profile; this filter loads first, since the profiles
  // below deny seccomp(2) itself.
  if (auto s = process_filter::install(::getpid(), threads); !s) return s;
  if (policy.syscalls == SandboxPolicy::Syscalls::profiler) return ok_status();
  std::vector<Rule> rules = policy.syscalls == SandboxPolicy::Syscalls::runner ? runner_rules(policy) : compiler_rules(policy);
  Context ctx;
  if (!ctx.get()) return Error{"sandbox: seccomp: cannot create a filter (libseccomp out of memory?)"};
  // A 32-bit or x32 system call would bypass a filter written for the native numbers.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0)
    return fail("bad-architecture action", rc);
  // The runner has CUDA's threads by the time it confines itself: the filter must cover them too.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_TSYNC, 1); rc < 0) return fail("thread sync", rc);

  g_trap_count = 0;
  for (const auto& rule : rules) {
    int nr = seccomp_syscall_resolve_name(rule.name);
    if (nr == __NR_SCMP_ERROR) continue;  // not a system call on this architecture
    int rc = seccomp_rule_add_array(ctx.get(), rule.action, nr, static_cast<unsigned>(rule.conditions.size()),
                                    rule.conditions.empty() ? nullptr : rule.conditions.data());
    if (rc < 0) return fail(fmt::format("rule for {}", rule.name), rc);
    if (rule.action == SCMP_ACT_TRAP && g_trap_count < kMaxTraps) {
      bool known = false;
      for (int i = 0; i < g_trap_count; ++i) known = known || g_traps[i].nr == nr;
      if (!known) g_traps[g_trap_count++] = {nr, rule.name, detail_for(rule.name)};
    }
  }
  if (policy.syscalls == SandboxPolicy::Syscalls::runner) {
    g_violation_fd = policy.violation_fd >= 0 ? policy.violation_fd : 2;
    struct sigaction sa {};
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGSYS, &sa, nullptr) != 0)
      return Error{fmt::format("sandbox: cannot install the SIGSYS handler: {}", std::strerror(errno))};
    sigset_t sys;
    sigemptyset(&sys);
    sigaddset(&sys, SIGSYS);
    ::pthread_sigmask(SIG_UNBLOCK, &sys, nullptr);
  }
  if (int rc = seccomp_load(ctx.get()); rc < 0) return fail("load", rc);
  return ok_status();
}

}  // namespace cutegen::seccomp_filter
