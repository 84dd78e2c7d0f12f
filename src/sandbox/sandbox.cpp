#include "sandbox/sandbox.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "sandbox/landlock.h"
#include "sandbox/process_filter.h"
#include "sandbox/seccomp_filter.h"

namespace cutegen {
namespace {

Status set_limit(int resource, const char* name, uint64_t value) {
  rlimit lim{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  if (::setrlimit(resource, &lim) != 0)
    return Error{fmt::format("sandbox: cannot set {} to {}: {}", name, value, std::strerror(errno))};
  return ok_status();
}

Status apply_limits(const SandboxPolicy& p) {
  // A crashing candidate must not leave a core file with whatever its process held.
  if (auto s = set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0); !s) return s;
  if (p.address_space_bytes)
    if (auto s = set_limit(RLIMIT_AS, "RLIMIT_AS", *p.address_space_bytes); !s) return s;
  if (p.file_size_bytes)
    if (auto s = set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", *p.file_size_bytes); !s) return s;
  if (p.cpu_seconds)
    if (auto s = set_limit(RLIMIT_CPU, "RLIMIT_CPU", *p.cpu_seconds); !s) return s;
  if (p.open_files)
    if (auto s = set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", *p.open_files); !s) return s;
  return ok_status();
}

// Nice 19 and SCHED_BATCH (no wake-up preemption of others): any process may lower its own priority;
// only one with CAP_SYS_NICE (root) can raise it back.
Status lower_priority() {
  if (::setpriority(PRIO_PROCESS, 0, 19) != 0)
    return Error{fmt::format("sandbox: cannot lower the priority (setpriority): {}", std::strerror(errno))};
  sched_param none{};
  if (::sched_setscheduler(0, SCHED_BATCH, &none) != 0)
    return Error{fmt::format("sandbox: cannot switch to SCHED_BATCH: {}", std::strerror(errno))};
  return ok_status();
}

}  // namespace

std::string to_string(SandboxPolicy::Syscalls s) {
  switch (s) {
    case SandboxPolicy::Syscalls::unrestricted: return "unrestricted";
    case SandboxPolicy::Syscalls::profiler: return "profiler";
    case SandboxPolicy::Syscalls::compiler: return "compiler";
    case SandboxPolicy::Syscalls::runner: return "runner";
  }
  return "unknown";
}

Result<SandboxPolicy::Syscalls> parse_syscalls(const std::string& name) {
  if (name == "unrestricted") return SandboxPolicy::Syscalls::unrestricted;
  if (name == "profiler") return SandboxPolicy::Syscalls::profiler;
  if (name == "compiler") return SandboxPolicy::Syscalls::compiler;
  if (name == "runner") return SandboxPolicy::Syscalls::runner;
  return Error{fmt::format("unknown syscall profile '{}' (known: compiler, runner, profiler, unrestricted)", name)};
}

std::string SandboxReport::summary() const {
  std::string landlock = landlock_abi == 0 ? "Landlock not applied: file access NOT restricted"
                                           : fmt::format("Landlock ABI {}: {}{}{}", landlock_abi,
                                                         landlock_files ? "files" : "files NOT restricted",
                                                         landlock_net ? ", TCP" : "", landlock_scope ? ", signals" : "");
  return fmt::format("seccomp {}; {}", seccomp ? "on" : "off", landlock);
}

Result<SandboxReport> apply_sandbox(const SandboxPolicy& policy) {
  SandboxReport report;
  if (policy.die_with_parent) {
    pid_t parent = policy.expected_parent > 0 ? policy.expected_parent : ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
      return Error{fmt::format("sandbox: PR_SET_PDEATHSIG: {}", std::strerror(errno))};
    // The parent may have died before the line above: then no signal will ever come.
    if (::getppid() != parent) ::kill(::getpid(), SIGKILL);
  }
  if (auto s = apply_limits(policy); !s) return s.error();
  if (policy.background)
    if (auto s = lower_priority(); !s) return s.error();
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return Error{fmt::format("sandbox: PR_SET_NO_NEW_PRIVS: {}", std::strerror(errno))};

  // Before Landlock, which may leave /proc unreadable: the threads the process filter lets calls name.
  const auto threads = process_filter::current_threads();
  landlock::Rules rules{policy.read_paths, policy.write_paths, policy.tcp_connect_ports, policy.confine_tcp,
                        policy.confine_abstract_unix};
  auto applied = landlock::restrict_self(rules);
  if (!applied) return applied.error();
  report.landlock_abi = applied->abi;
  report.landlock_files = applied->files;
  report.landlock_net = applied->net;
  report.landlock_scope = applied->scope;
  // Without Landlock nothing restricts TCP by port: refuse rather than open the network.
  if (applied->abi == 0 && !policy.tcp_connect_ports.empty())
    return Error{"sandbox: TCP ports can be restricted only with Landlock, which this kernel lacks"};

  if (auto s = seccomp_filter::install(policy, threads); !s) return s.error();
  report.seccomp = policy.syscalls != SandboxPolicy::Syscalls::unrestricted;
  return report;
}

SandboxSupport probe_sandbox_support() {
  SandboxSupport s;
  // PR_GET_SECCOMP fails with EINVAL on a kernel without seccomp; filters need SECCOMP_FILTER too,
  // which SECCOMP_GET_ACTION_AVAIL answers for the action the runner profile relies on.
  if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
    s.seccomp_detail = "not in this kernel (CONFIG_SECCOMP)";
  } else {
    uint32_t action = SECCOMP_RET_TRAP;
    if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) {
      s.seccomp_detail = fmt::format("filters unavailable ({})", std::strerror(errno));
    } else {
      s.seccomp = true;
      s.seccomp_detail = "filters available, libseccomp " + seccomp_filter::library_version();
    }
  }
  std::string why;
  s.landlock_abi = landlock::abi_version(&why);
  s.landlock_detail = s.landlock_abi > 0 ? fmt::format("ABI {}", s.landlock_abi) : why;
  s.no_new_privs = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) >= 0;
  return s;
}

}  // namespace cutegen
