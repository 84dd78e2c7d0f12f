#include "sandbox/process_filter.h"

#include <dirent.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace cutegen::process_filter {
namespace {

// Every system call of Linux (up to 6.18) that names a process, and what the filter does with it.
// A named process may be the caller only: argument 0 (meaning "myself" everywhere but for the signal
// calls, where it is the caller's process group) or `self`. Negative values (process groups, "every
// process") and anything with the upper 32 bits set are refused.
//
//   refused unless the named pid is 0 or self:
//     kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo (signals; kill(0) is the own group)
//     prlimit64 (read or set another's rlimits: a CPU limit kills it)
//     sched_setaffinity, sched_setscheduler, sched_setparam, sched_setattr (pin, idle-schedule)
//     migrate_pages, move_pages (another's memory placement), get_robust_list (another's addresses)
//     pidfd_open (a pidfd is how pidfd_getfd, process_madvise, process_mrelease and waitid reach a
//       process; the others are only ever given one: from here, or from clone(CLONE_PIDFD) for a child)
//     process_vm_readv, process_vm_writev, kcmp (both pids), ptrace (its pid), perf_event_open (pid -1
//       is every process on a CPU)
//   refused unless the selector names one process and it is 0 or self:
//     setpriority, getpriority: only PRIO_PROCESS (not PRIO_PGRP, PRIO_USER)
//     ioprio_set, ioprio_get: only IOPRIO_WHO_PROCESS (not _PGRP, _USER)
//     fcntl F_SETOWN (whom SIGIO/SIGURG go to); F_SETOWN_EX (its pid sits in memory): always refused
//     prctl PR_SCHED_CORE (its pid, argument 2: another's core-scheduling cookie)
//   always refused:
//     pidfd_send_signal (it also takes a /proc/<pid> directory, which pidfd_open never made)
//     ioctl FIOSETOWN, SIOCSPGRP (SIGIO's owner, through memory)
//     keyctl KEYCTL_SESSION_TO_PARENT (replaces the parent's session keyring)
//   left open, because they only read and glibc names a thread by its TID with them
//   (pthread_getaffinity_np, pthread_getschedparam, pthread_getattr_np):
//     sched_getaffinity, sched_getscheduler, sched_getparam, sched_getattr, sched_rr_get_interval;
//     also getpgid, getsid, capget, clock_gettime/clock_getres on another's CPU clock (reads)
//   left open, because the kernel itself limits them to the caller or its children:
//     wait4, waitid, setpgid, capset, set_robust_list, timer_create (SIGEV_THREAD_ID: own threads),
//     mq_notify; pidfd_getfd, process_madvise, process_mrelease, setns (they need a pidfd)
//   no pid at all, though listed beside these at times: set_mempolicy_home_node, mbind,
//     set_mempolicy (the caller's own memory), membarrier.
// Through files, /proc/<pid>/oom_score_adj, autogroup and the like, reach other processes too:
// Landlock decides those (the confined processes write only their own directories).
//
// Threads: the calls above that take a thread's TID (sched_setaffinity from pthread_setaffinity_np,
// sched_setscheduler from pthread_setschedparam) may name the calling thread (0), the main one (tid
// == pid) and the threads that existed when the filter loaded (CUDA's, in the runner, which starts
// none after). A thread started later is refused by TID: its library gets EPERM, not a kill. (A TID
// is reused only once the kernel's pid space has wrapped around, which a runner does not outlive.)

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "process_filter: add this architecture's AUDIT_ARCH value"
#endif

// Where a 64-bit argument's halves sit in struct seccomp_data.
constexpr uint32_t arg_low(int i) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * i + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4));
}
constexpr uint32_t arg_high(int i) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * i + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 4 : 0));
}

// One call's checks, as a block of instructions that ends in its own "allow" and "refuse" returns.
// Jumps name NEXT (the following instruction), ALLOW or DENY; they are resolved when the block closes.
class Block {
 public:
  enum Target { kNext, kToAllow, kToDeny };

  void load(uint32_t offset) { ops_.push_back({BPF_LD | BPF_W | BPF_ABS, offset, kNext, kNext}); }
  void jump_eq(uint32_t k, Target yes, Target no) { ops_.push_back({BPF_JMP | BPF_JEQ | BPF_K, k, yes, no}); }
  void ret(Target t) { ops_.push_back({BPF_JMP | BPF_JA, 0, t, t}); }

  // The argument names 0 or one of `own` (the pid, the threads), else DENY; falls through when it does.
  void pid_is_self(int arg, const std::vector<uint32_t>& own) {
    load(arg_high(arg));
    jump_eq(0, kNext, kToDeny);
    load(arg_low(arg));
    std::vector<uint32_t> values = {0};
    values.insert(values.end(), own.begin(), own.end());
    for (std::size_t i = 0; i < values.size(); ++i) {
      bool last = i + 1 == values.size();
      // A match skips the tests left; the last test's miss is a refusal.
      ops_.push_back({BPF_JMP | BPF_JEQ | BPF_K, values[i], static_cast<int>(kSkip + (values.size() - i - 1)),
                      last ? kToDeny : kNext});
    }
  }
  // The low 32 bits of the argument (an int to the kernel) equal k: falls through; else ALLOW.
  void only_if_low_is(int arg, uint32_t k) {
    load(arg_low(arg));
    jump_eq(k, kNext, kToAllow);
  }
  // The whole argument equals k: falls through; else DENY (a selector that must be exactly this).
  void must_be(int arg, uint32_t k) {
    load(arg_high(arg));
    jump_eq(0, kNext, kToDeny);
    load(arg_low(arg));
    jump_eq(k, kNext, kToDeny);
  }

  std::vector<sock_filter> close() const {
    std::vector<sock_filter> out;
    const std::size_t allow = ops_.size(), deny = ops_.size() + 1;
    auto offset = [&](std::size_t at, int target) -> uint8_t {
      if (target == kNext) return 0;
      if (target >= kSkip) return static_cast<uint8_t>(target - kSkip);
      return static_cast<uint8_t>((target == kToAllow ? allow : deny) - at - 1);
    };
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const Op& op = ops_[i];
      if (op.code == (BPF_JMP | BPF_JA)) {  // an unconditional jump to ALLOW or DENY
        out.push_back(BPF_STMT(BPF_JMP | BPF_JA, offset(i, op.jt)));
      } else if (BPF_CLASS(op.code) == BPF_JMP) {
        out.push_back(BPF_JUMP(op.code, op.k, offset(i, op.jt), offset(i, op.jf)));
      } else {
        out.push_back(BPF_STMT(op.code, op.k));
      }
    }
    out.push_back(BPF_STMT(BPF_RET | BPF_K, kAllow));
    out.push_back(BPF_STMT(BPF_RET | BPF_K, kDeny));
    return out;
  }

 private:
  static constexpr int kSkip = 3;  // kSkip + n: jump over the next n instructions
  struct Op {
    uint16_t code;
    uint32_t k;
    int jt, jf;
  };
  std::vector<Op> ops_;
};

struct Call {
  long nr;
  Block checks;
};

std::vector<Call> calls(const std::vector<uint32_t>& self) {
  std::vector<Call> r;
  auto pid_args = [&](long nr, std::initializer_list<int> args) {
    Block b;
    for (int a : args) b.pid_is_self(a, self);
    b.ret(Block::kToAllow);
    r.push_back({nr, b});
  };
  for (long nr : {SYS_kill, SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo, SYS_prlimit64,
                  SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam, SYS_sched_setattr,
                  SYS_migrate_pages, SYS_move_pages, SYS_get_robust_list, SYS_pidfd_open, SYS_process_vm_readv,
                  SYS_process_vm_writev})
    pid_args(nr, {0});
  pid_args(SYS_kcmp, {0, 1});
  pid_args(SYS_ptrace, {1});
  pid_args(SYS_perf_event_open, {1});

  auto selected = [&](long nr, uint32_t one_process) {  // (which, who): one process, and that is us
    Block b;
    b.must_be(0, one_process);
    b.pid_is_self(1, self);
    b.ret(Block::kToAllow);
    r.push_back({nr, b});
  };
  constexpr uint32_t kPrioProcess = 0, kIoprioWhoProcess = 1;
  selected(SYS_setpriority, kPrioProcess);
  selected(SYS_getpriority, kPrioProcess);
  selected(SYS_ioprio_set, kIoprioWhoProcess);
  selected(SYS_ioprio_get, kIoprioWhoProcess);

  constexpr uint32_t kFSetOwn = 8, kFSetOwnEx = 15, kPrSchedCore = 62, kKeyctlSessionToParent = 18;
  constexpr uint32_t kFioSetOwn = 0x8901, kSiocSPgrp = 0x8902;
  {
    // fcntl takes its command as an int: the kernel looks at the low 32 bits only, and so does this.
    Block b;
    b.load(arg_low(1));
    b.jump_eq(kFSetOwnEx, Block::kToDeny, Block::kNext);
    b.jump_eq(kFSetOwn, Block::kNext, Block::kToAllow);
    b.pid_is_self(2, self);
    b.ret(Block::kToAllow);
    r.push_back({SYS_fcntl, b});
  }
  {
    Block b;
    b.load(arg_low(1));
    b.jump_eq(kFioSetOwn, Block::kToDeny, Block::kNext);
    b.jump_eq(kSiocSPgrp, Block::kToDeny, Block::kToAllow);
    r.push_back({SYS_ioctl, b});
  }
  {
    Block b;
    b.only_if_low_is(0, kPrSchedCore);
    b.pid_is_self(2, self);
    b.ret(Block::kToAllow);
    r.push_back({SYS_prctl, b});
  }
  {
    Block b;
    b.only_if_low_is(0, kKeyctlSessionToParent);
    b.ret(Block::kToDeny);
    r.push_back({SYS_keyctl, b});
  }
  {
    Block b;
    b.ret(Block::kToDeny);
    r.push_back({SYS_pidfd_send_signal, b});
  }
  // ioctl first: the GPU driver's calls are the runner's most frequent, and pass after one test.
  std::stable_partition(r.begin(), r.end(), [](const Call& c) { return c.nr == SYS_ioctl; });
  return r;
}

Result<std::vector<sock_filter>> program(const std::vector<uint32_t>& self) {
  std::vector<sock_filter> p = {
      // Another architecture's numbers (a 32-bit int 0x80) would name other calls: never allowed.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kKill),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
#if defined(__x86_64__)
  // The x32 ABI: the same arch, numbers with bit 30 set.
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, kKill));
#endif
  for (const Call& c : calls(self)) {
    auto block = c.checks.close();
    // A conditional jump reaches 255 instructions ahead; install() keeps the names few enough.
    if (block.size() > 255)
      return Error{fmt::format("sandbox: process filter: a block of {} instructions is too long to jump over",
                               block.size())};
    // Each block ends in returns, so the accumulator still holds the call's number at every test.
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(c.nr), 0,
                         static_cast<uint8_t>(block.size())));
    p.insert(p.end(), block.begin(), block.end());
  }
  p.push_back(BPF_STMT(BPF_RET | BPF_K, kAllow));
  return p;
}

}  // namespace

std::vector<pid_t> current_threads() {
  std::vector<pid_t> tids;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return tids;  // then only 0 and the pid can be named: stricter, never wider
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && tid > 0) tids.push_back(static_cast<pid_t>(tid));
  }
  ::closedir(dir);
  return tids;
}

Status install(pid_t self, const std::vector<pid_t>& threads) {
  if (self <= 0) return Error{fmt::format("sandbox: process filter: {} is not a process id", self)};
  std::vector<uint32_t> own = {static_cast<uint32_t>(self)};
  for (pid_t t : threads)
    if (t > 0 && t != self) own.push_back(static_cast<uint32_t>(t));
  // kcmp's block, the longest, tests two arguments against each name: 64 keep it under a jump's reach.
  if (own.size() > 64)
    return Error{fmt::format("sandbox: process filter: the process has {} threads, more than the 63 it can name",
                             own.size() - 1)};
  auto p = program(own);
  if (!p) return p.error();
  sock_fprog prog{static_cast<unsigned short>(p->size()), p->data()};
  // TSYNC: CUDA's threads exist by the time the runner confines itself.
  long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (rc != 0) {
    if (rc > 0)
      return Error{fmt::format("sandbox: process filter: thread {} could not take the filter", rc)};
    return Error{fmt::format("sandbox: process filter: {}", std::strerror(errno))};
  }
  return ok_status();
}

}  // namespace cutegen::process_filter
