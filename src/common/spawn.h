#pragma once
// The one posix_spawn of cutegen: PosixProcessRunner (run to completion) and LineProcess (a line
// protocol) differ only in how they connect the child's standard streams, so the rest is here once.
#include <sys/types.h>

#include <filesystem>
#include <variant>

#include "common/process.h"
#include "common/result.h"

namespace cutegen {

// Where the child's descriptors 0, 1 and 2 come from: a descriptor of ours (dup2'd onto it), or, for
// stderr only, a file opened for appending (a long-lived child's diagnostics survive it and cannot
// block it on a full pipe).
struct ChildStdio {
  int in = -1;
  int out = -1;
  std::variant<int, std::filesystem::path> err;
};

// Starts spec.argv (argv[0] looked up on PATH) with spec's environment (common/child_env.h) and cwd:
//  * in a process group of its own, so a timeout or Ctrl-C kills everything it started (nvcc runs cicc,
//    ptxas, ...);
//  * with default signal dispositions and an empty signal mask, whatever cutegen ignores (SIGPIPE) or
//    holds off while spawning;
//  * registered in the child registry (common/child_registry.h) before a Ctrl-C can land between the
//    spawn and the registration.
// The child's pid (= its group id), or an Error saying what could not be started and why. The caller
// closes its copies of the child's ends and reaps the child.
Result<pid_t> spawn_child_group(const ProcessSpec& spec, const ChildStdio& stdio);

}  // namespace cutegen
