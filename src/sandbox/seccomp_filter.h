#pragma once
// The seccomp profiles (libseccomp): what `compiler` and `runner` deny and how.
#include <sys/types.h>

#include <vector>

#include "common/result.h"
#include "sandbox/sandbox.h"

namespace cutegen::seccomp_filter {

// Exit status of a process stopped by the runner profile's SIGSYS handler.
constexpr int kViolationExit = 97;

// Loads the filters for policy.syscalls (not `unrestricted`) on every thread of the process: the
// process filter (process_filter.h), then the profile's. The runner profile first installs the
// SIGSYS handler that reports a trapped call. Needs no_new_privs.
// `threads`: the process's threads before Landlock (process_filter::current_threads()), which the
// process filter lets calls name by TID.
Status install(const SandboxPolicy& policy, const std::vector<pid_t>& threads);

// libseccomp's version ("2.5.4"), for doctor.
std::string library_version();

}  // namespace cutegen::seccomp_filter
