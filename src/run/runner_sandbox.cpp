#include "run/runner_sandbox.h"

#include <link.h>

#include <cstdlib>
#include <set>
#include <sstream>

namespace cutegen {
namespace fs = std::filesystem;

namespace {

// Read-only roots every Linux process with CUDA needs: the loader and system libraries, /etc (ld.so.cache,
// nsswitch), the driver's /proc and /sys entries. Home directories are deliberately absent.
const std::vector<fs::path>& system_roots() {
  static const std::vector<fs::path> roots = {"/usr", "/lib", "/lib64", "/lib32", "/etc", "/opt", "/proc", "/sys",
                                              "/run", "/var/run"};
  return roots;
}

}  // namespace

std::vector<fs::path> loaded_library_dirs() {
  std::set<std::string> dirs;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && *info->dlpi_name)
          static_cast<std::set<std::string>*>(data)->insert(fs::path(info->dlpi_name).parent_path().string());
        return 0;
      },
      &dirs);
  return {dirs.begin(), dirs.end()};
}

SandboxPolicy runner_start_policy(const RunnerSandboxSettings& settings, const fs::path& private_dir,
                                  const fs::path& library, const std::vector<fs::path>& library_dirs) {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::unrestricted;  // seccomp comes in step 2, once CUDA is up
  p.file_size_bytes = 1ull << 30;  // what the candidate may write in its private directory
  p.open_files = 1024;
  p.die_with_parent = true;
  // Under Nsight Compute the injected library talks TCP to ncu: Landlock (ABI 4+) would refuse it.
  p.confine_tcp = !settings.network;
  if (!settings.files) return p;
  std::set<fs::path> read;
  for (const auto& r : system_roots())
    if (fs::exists(r)) read.insert(r);
  for (const auto& d : library_dirs)
    if (!d.empty() && fs::exists(d)) read.insert(d);
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) {
    std::stringstream parts(ld);
    std::string dir;
    while (std::getline(parts, dir, ':'))
      if (!dir.empty() && fs::exists(dir)) read.insert(dir);
  }
  read.insert(library.parent_path());
  p.read_paths.assign(read.begin(), read.end());
  // /dev: the GPU's device nodes are opened read-write by the driver (and /dev/shm by some CUDA paths).
  p.write_paths = {private_dir, "/dev"};
  return p;
}

SandboxPolicy runner_load_policy(const RunnerSandboxSettings& settings, int violation_fd) {
  SandboxPolicy p;
  // Under Nsight Compute (network: its injected library talks TCP to ncu and starts threads) the
  // system-call filter would stop the profiler itself; the file and environment confinement stay.
  p.syscalls = settings.syscalls && !settings.network ? SandboxPolicy::Syscalls::runner
                                                      : SandboxPolicy::Syscalls::unrestricted;
  p.deny_threads = settings.deny_threads;
  p.violation_fd = violation_fd;
  p.die_with_parent = false;  // already set in step 1
  return p;
}

}  // namespace cutegen
