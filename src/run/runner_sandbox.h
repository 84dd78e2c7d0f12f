#pragma once
// The runner's confinement (docs/judge.md, guarantee 6), in two steps because CUDA must come up first:
//   1. at start, before CUDA: die with the worker, rlimits, and Landlock -- files readable only where the
//      system, the CUDA libraries and the candidate library live, writable only in the private directory
//      and the GPU's device nodes (every thread CUDA starts later inherits it);
//   2. before the candidate library is loaded (its constructors run there): the seccomp `runner` profile.
// Free of CUDA so the policies are tested on machines without a GPU.
#include <filesystem>
#include <string>
#include <vector>

#include "run/runner_job.h"
#include "sandbox/sandbox.h"

namespace cutegen {

// Step 1. `library_dirs`: where this process's shared libraries were loaded from (so the CUDA driver
// library, which the runtime opens later, is found beside them); LD_LIBRARY_PATH's directories are added.
SandboxPolicy runner_start_policy(const RunnerSandboxSettings& settings, const std::filesystem::path& private_dir,
                                  const std::filesystem::path& library,
                                  const std::vector<std::filesystem::path>& library_dirs);

// Step 2.
SandboxPolicy runner_load_policy(const RunnerSandboxSettings& settings, int violation_fd);

// The directories of the shared libraries loaded in this process now (dl_iterate_phdr).
std::vector<std::filesystem::path> loaded_library_dirs();

}  // namespace cutegen
