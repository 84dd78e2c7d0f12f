#pragma once
// The seccomp filter that keeps a confined process away from every other process: each system call
// that names a process (a pid, tid, process group or user) may name only the caller. Written as
// classic BPF by hand because libseccomp compares an argument once per rule, and "0 or my own pid"
// needs two comparisons. It stacks with the libseccomp profile (seccomp_filter.h), which loads after
// it; process_filter.cpp lists every such call and what it does with it.
#include <sys/types.h>

#include <vector>

#include "common/result.h"

namespace cutegen::process_filter {

// Loads the filter on every thread of the process (TSYNC). Calls may name 0, `self` (the caller's
// pid; in a process the confined one starts, only 0 means itself) and `threads` (the process's
// threads now: they may still name each other). A refused call fails with EPERM. Needs
// no_new_privs, and must load before a filter that denies seccomp(2).
Status install(pid_t self, const std::vector<pid_t>& threads);

// The calling process's threads, from /proc/self/task (empty where it cannot be read).
std::vector<pid_t> current_threads();

}  // namespace cutegen::process_filter
