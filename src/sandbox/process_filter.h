#pragma once
// The seccomp filter that keeps a confined process away from every other process: each system call
// that names a process (a pid, tid, process group or user) may name only the caller. Written as
// classic BPF by hand because libseccomp compares an argument once per rule, and "0 or my own pid"
// needs two comparisons. It stacks with the libseccomp profile (seccomp_filter.h), which loads after
// it; process_filter.cpp lists every such call and what it does with it.
#include <sys/types.h>

#include "common/result.h"

namespace cutegen::process_filter {

// Loads the filter on every thread of the process (TSYNC). `self` is the pid the filter lets calls
// name besides 0 (the caller's own pid; in a process the confined one starts, only 0 means itself).
// A refused call fails with EPERM. Needs no_new_privs, and must load before a filter that denies
// seccomp(2).
Status install(pid_t self);

}  // namespace cutegen::process_filter
