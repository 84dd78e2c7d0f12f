#pragma once
// Every child process group cutegen has running (nvcc, the worker, the runner, ncu), so that Ctrl-C,
// SIGTERM or SIGHUP end them all instead of leaving them reparented to init and holding the GPU.
// PosixProcessRunner and LineProcess register what they start; main() installs the handlers.
#include <sys/types.h>

#include "common/result.h"

namespace cutegen {

// Holds SIGINT/SIGTERM/SIGHUP off this thread from before a spawn until its group is registered, and
// tells the handler (which may run on another thread) to wait for the registration.
class SpawnGuard {
 public:
  SpawnGuard();
  ~SpawnGuard();
  SpawnGuard(const SpawnGuard&) = delete;
  SpawnGuard& operator=(const SpawnGuard&) = delete;
};

// Records a running child's process group; an Error (and the group is killed) when the table is full.
Status register_child_group(pid_t pgid);
void unregister_child_group(pid_t pgid);
int registered_child_groups();  // for tests

// SIGKILL to every registered group. Async-signal-safe: this is what the handlers call.
void kill_child_groups();

// SIGINT, SIGTERM and SIGHUP: kill every registered group, then _exit(128 + signal). Nothing is
// flushed or written: the run directory is left as a kill -9 leaves it, which --resume handles.
Status install_termination_handlers();

}  // namespace cutegen
