#pragma once
// The runner's confinement (docs/judge.md, guarantee 6), in two steps because CUDA must come up first:
//   1. at start, before CUDA: die with the worker, rlimits, and Landlock (every thread CUDA starts later
//      inherits it). Readable: only the library FILES this process has loaded (the CUDA driver library is
//      loaded first for that), the driver's own libraries beside it, the candidate library, the loader's
//      cache, /proc and /sys; writable: the private directory and the device nodes. Not whole library
//      directories: the toolkit's holds cuBLAS, and a candidate that finds dlopen by walking libc's
//      symbol table in memory (no import to refuse) would load it (attacks/sandbox/dlopen_by_elf_walk.cu);
//   2. before the candidate library is loaded (its constructors run there): the seccomp `runner` profile.
// Free of CUDA so the policies are tested on machines without a GPU.
#include <filesystem>
#include <string>
#include <vector>

#include "run/runner_job.h"
#include "sandbox/sandbox.h"

namespace cutegen {

// Step 1. `loaded_libraries`: the files of the shared libraries this process has loaded (after the driver
// library was preloaded); `driver_dir`: where the driver library is, whose libcuda*/libnvidia-* files the
// driver may open later (nothing else of that directory: on some systems cuBLAS sits there too).
SandboxPolicy runner_start_policy(const RunnerSandboxSettings& settings, const std::filesystem::path& private_dir,
                                  const std::filesystem::path& library,
                                  const std::vector<std::filesystem::path>& loaded_libraries,
                                  const std::filesystem::path& driver_dir);

// Step 2.
SandboxPolicy runner_load_policy(const RunnerSandboxSettings& settings, int violation_fd);

// Drops every capability (effective, permitted, inheritable, ambient, bounding): a runner started as
// root keeps its user id but loses what root's capabilities add (reading other processes' /proc entries,
// overriding file permissions). Applied before the candidate is loaded when the sandbox is `narrow`.
Status drop_capabilities();

// The files of the shared libraries loaded in this process now (dl_iterate_phdr).
std::vector<std::filesystem::path> loaded_libraries();

// Loads the CUDA driver library (so CUDA's start needs to open no library file later) and returns its
// directory; empty when it cannot be loaded (CUDA's start then fails with the driver's own message).
std::filesystem::path preload_driver_library();

}  // namespace cutegen
