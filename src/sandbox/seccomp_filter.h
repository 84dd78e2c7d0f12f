#pragma once
// The seccomp profiles (libseccomp): what `compiler` and `runner` deny and how.
#include "common/result.h"
#include "sandbox/sandbox.h"

namespace cutegen::seccomp_filter {

// Exit status of a process stopped by the runner profile's SIGSYS handler.
constexpr int kViolationExit = 97;

// Loads the filter for policy.syscalls (not `unrestricted`) on every thread of the process. The
// runner profile first installs the SIGSYS handler that reports a trapped call. Needs no_new_privs.
Status install(const SandboxPolicy& policy);

// libseccomp's version ("2.5.4"), for doctor.
std::string library_version();

}  // namespace cutegen::seccomp_filter
