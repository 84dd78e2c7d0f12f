#pragma once
// Confinement for every process that touches machine-written code (nvcc on a candidate, the runner
// that loads its kernel.so), without root: no_new_privs, rlimits, die-with-parent, a seccomp filter
// (libseccomp) and Landlock. Applied to the calling process, irreversibly; what it applies survives
// execve, which is how `cutegen-sandbox` wraps nvcc. docs/sandbox.md says what each profile denies.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace cutegen {

struct SandboxPolicy {
  // unrestricted: no seccomp filter (Landlock, rlimits and the rest still apply).
  // profiler:     only other processes are out of reach (below); everything else stays open. The
  //               runner under Nsight Compute, whose injected library starts threads and talks TCP.
  // compiler:     nvcc and its children: other processes out of reach, no network sockets, no unix
  //               or netlink sockets (socketpair stays), ptrace, mounts, namespaces, kernel keyrings,
  //               bpf, perf ...; every denied call fails with EPERM. Processes may be created.
  // runner:       everything `compiler` denies, plus process creation, threads (deny_threads),
  //               signals to other processes, signal handlers, timers, io_uring, prctl calls that
  //               undo the sandbox. Calls that show hostile intent (processes, network, ptrace,
  //               signals to others) stop the process: its SIGSYS handler writes "sandbox: <call>"
  //               to violation_fd and _exit(97)s, or, where the caller had SIGSYS blocked (glibc does
  //               around posix_spawn), the kernel kills it with SIGSYS. The rest fail with EPERM.
  // "Other processes out of reach" (process_filter.h, every profile but unrestricted): each call that
  // names a process -- signals, prlimit64, setpriority, sched_set*, ioprio_set, migrate_pages,
  // pidfd_open, ... -- may name only the caller (0, the pid that applied the filter or a thread it
  // had then; in a child it started, only 0), else EPERM.
  enum class Syscalls { unrestricted, profiler, compiler, runner };
  Syscalls syscalls = Syscalls::unrestricted;
  // Landlock. With neither list, file access is not restricted; with either, only these (and
  // /dev/null read-write) are reachable by open/exec. Descriptors opened earlier keep working.
  std::vector<std::filesystem::path> read_paths;   // read + execute beneath these
  std::vector<std::filesystem::path> write_paths;  // read + write + create/remove beneath these (no execute)
  // rlimits (soft = hard); RLIMIT_CORE is always 0.
  std::optional<uint64_t> address_space_bytes, file_size_bytes, cpu_seconds, open_files;
  bool die_with_parent = true;  // PR_SET_PDEATHSIG(SIGKILL), and SIGKILL now if the parent is already gone
  pid_t expected_parent = 0;    // the parent die_with_parent checks for; 0: getppid() at the call
  // runner: thread creation is its own switch because CUDA might start a thread lazily (the GPU run tells).
  bool deny_threads = true;
  int violation_fd = -1;  // runner: where a trapped call is reported; -1: stderr
  // TCP connections allowed only to these ports (Landlock ABI >= 4 enforces it; without it a non-empty
  // list is an error). Empty: no TCP at all. Meant for Nsight Compute, whose injected library talks TCP.
  std::vector<uint16_t> tcp_connect_ports;
  // false: Landlock leaves TCP alone and only the seccomp profile decides (under Nsight Compute, whose
  // ports are not known in advance, with Syscalls::profiler).
  bool confine_tcp = true;
  // Landlock ABI >= 6: no connecting to abstract unix sockets made outside the sandbox (an X11 display,
  // a D-Bus bus). Signals to processes outside it are always blocked there.
  bool confine_abstract_unix = true;
  // Batch priority (nice 19, SCHED_BATCH), inherited by everything the program starts. Compiles run
  // so: the judge times a kernel with two processes that must get a CPU the moment they are ready,
  // and 16 nvcc processes at normal priority beside them on a 16-core H200 host made an honest
  // 0.56 ms ReLU measure 7.2 ms (python/cutegen_worker/cpu_wait.py detects what is left).
  bool background = false;
  // cutegen-sandbox's own execve under the runner profile: exec is allowed only with exactly this
  // pointer as the path argument, which the exec'd program cannot know (a wrong guess is a SIGSYS).
  const char* allowed_execve_path = nullptr;
  // cutegen-sandbox only (--preload): a library readable beneath Landlock and set as LD_PRELOAD for the
  // program it runs, and so for everything that program starts. Empty: none.
  std::filesystem::path preload;
};

// What apply_sandbox could enforce on this kernel.
struct SandboxReport {
  bool seccomp = false;        // a filter was loaded (false only for Syscalls::unrestricted)
  int landlock_abi = 0;        // 0: Landlock missing (or nothing asked of it)
  bool landlock_files = false; // file access restricted to the policy's paths
  bool landlock_net = false;   // TCP bind/connect restricted (ABI >= 4)
  bool landlock_scope = false; // signals (and abstract unix sockets) confined to the sandbox (ABI >= 6)
  std::string summary() const;  // one line for logs
};

// Applies `policy` to the calling process; on an Error the process is partly confined and should exit.
// Landlock confines only the calling thread (and threads it creates later): apply before other threads
// exist, or accept that older threads are free of it. The seccomp filter covers every thread (TSYNC).
Result<SandboxReport> apply_sandbox(const SandboxPolicy& policy);

// What this kernel offers, for `cutegen doctor`. Probes only; changes nothing.
struct SandboxSupport {
  bool seccomp = false;
  std::string seccomp_detail;  // libseccomp version, or why not
  int landlock_abi = 0;
  std::string landlock_detail;  // "ABI 7", "disabled at boot (lsm=...)", "not in this kernel"
  bool no_new_privs = false;
};
SandboxSupport probe_sandbox_support();

std::string to_string(SandboxPolicy::Syscalls s);
Result<SandboxPolicy::Syscalls> parse_syscalls(const std::string& name);

}  // namespace cutegen
