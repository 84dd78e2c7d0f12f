#include "run/runner_sandbox.h"

#include <dlfcn.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <link.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace cutegen {
namespace fs = std::filesystem;

std::vector<fs::path> loaded_libraries() {
  std::set<std::string> files;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && *info->dlpi_name) static_cast<std::set<std::string>*>(data)->insert(info->dlpi_name);
        return 0;
      },
      &files);
  return {files.begin(), files.end()};
}

fs::path preload_driver_library() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!handle) return {};
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return {};
  std::error_code ec;
  auto real = fs::canonical(map->l_name, ec);
  return ec ? fs::path(map->l_name).parent_path() : real.parent_path();
}

SandboxPolicy runner_start_policy(const RunnerSandboxSettings& settings, const fs::path& private_dir,
                                  const fs::path& library, const std::vector<fs::path>& loaded,
                                  const fs::path& driver_dir) {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::unrestricted;  // seccomp comes in step 2, once CUDA is up
  p.file_size_bytes = 1ull << 30;  // what the candidate may write in its private directory
  p.open_files = 1024;
  // Not under Nsight Compute: PR_SET_PDEATHSIG fires when the *thread* that started us ends, and ncu
  // starts the application from a thread that need not live as long as the run (on the H200 every
  // profile ended within a second with ncu reporting error code 9, SIGKILL's number, before this
  // was changed). ncu itself is cutegen's child,
  // ended with its process group, and the runner stops after its few calls.
  p.die_with_parent = !settings.network;
  // Under Nsight Compute the injected library talks TCP to ncu: Landlock (ABI 4+) would refuse it.
  p.confine_tcp = !settings.network;
  if (!settings.files) return p;
  std::set<fs::path> read = {"/sys"};
  std::error_code ec;
  if (!settings.narrow) {
    read.insert("/proc");
  } else {
    // Of /proc: this process's own entries and what the driver and the C library read; not other
    // processes' (their environments hold the user's keys).
    if (auto self = fs::canonical("/proc/self", ec); !ec) read.insert(self);
    for (const char* p : {"/proc/driver", "/proc/sys", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/modules",
                          "/proc/devices", "/proc/filesystems", "/proc/version"})
      read.insert(p);
  }
  for (const auto& f : loaded) {
    read.insert(f);
    if (auto real = fs::canonical(f, ec); !ec) read.insert(real);  // the loader opened the link's target
  }
  if (!driver_dir.empty()) {
    for (const auto& entry : fs::directory_iterator(driver_dir, ec)) {
      auto name = entry.path().filename().string();
      // Not the driver's run-time compilers: the candidate's kernels are machine code for this GPU, and
      // with them readable a candidate could compile raw PTX or NVVM it hides from the static checks and
      // launch it past the per-kernel CuTe check (attacks/cute_only/jit_obfuscated_ptx.cu). One the runner had
      // already loaded stays readable through `loaded`.
      if (name.rfind("libnvidia-ptxjitcompiler", 0) == 0 || name.rfind("libnvidia-nvvm", 0) == 0) continue;
      if (name.rfind("libcuda", 0) == 0 || name.rfind("libnvidia-", 0) == 0) read.insert(entry.path());
    }
  }
  if (fs::exists("/etc/ld.so.cache")) read.insert("/etc/ld.so.cache");
  // A diagnosis knob, never set by cutegen: more readable paths, to find what a machine's CUDA needs
  // (scripts/gpu-check's smoke stage uses it; docs/sandbox.md).
  if (const char* extra = std::getenv("CUTEGEN_RUNNER_EXTRA_READ"); extra && *extra) {
    std::stringstream parts(extra);
    std::string path;
    while (std::getline(parts, path, ':'))
      if (!path.empty()) read.insert(path);
  }
  std::vector<fs::path> write = {private_dir};
  if (!settings.narrow) {
    write.push_back("/dev");
  } else {
    // Of /dev: the GPU's nodes (nvidiactl, nvidia0, nvidia-uvm, nvidia-caps/ ...), not /dev/shm.
    for (const auto& entry : fs::directory_iterator("/dev", ec))
      if (entry.path().filename().string().rfind("nvidia", 0) == 0) write.push_back(entry.path());
    for (const char* p : {"/dev/zero", "/dev/urandom", "/dev/random"}) read.insert(p);
  }
  // The driver names its threads by writing /proc/self/task/<tid>/comm (seen on the H200: without this,
  // creating the context fails with cudaErrorOperatingSystem). Only this process's task directory.
  if (auto task = fs::canonical("/proc/self/task", ec); !ec) write.push_back(task);
  if (settings.network) {
    // Under Nsight Compute: CUDA loads ncu's injection library (CUDA_INJECTION64_PATH) when it starts,
    // and that library reads its own installation and keeps a lock in /tmp.
    // Its libraries sit in <install>/target/<platform>/ and read the rest of the installation; they
    // come through CUDA_INJECTION64_PATH or LD_PRELOAD, or are already loaded.
    std::vector<fs::path> candidates(loaded.begin(), loaded.end());
    for (const char* var : {"CUDA_INJECTION64_PATH", "LD_PRELOAD"})
      if (const char* v = std::getenv(var); v && *v) {
        std::stringstream parts(v);
        std::string path;
        while (std::getline(parts, path, ':'))
          if (!path.empty()) candidates.push_back(path);
      }
    for (const auto& c : candidates)
      for (fs::path up = c.parent_path(); up.has_relative_path(); up = up.parent_path())
        if (up.filename() == "target") {
          if (up.parent_path().has_relative_path()) read.insert(up.parent_path());
          break;
        }
    write.push_back("/tmp");
    // Its libraries load more of the system (read-only), and it shares memory with ncu through
    // /dev/shm. Not /etc as a whole (a root runner could read /etc/shadow with TCP open): only what
    // the loader and the resolver read. (On the H200 a profile under the start policy without these
    // ended in under a second with code 9 and no step of the runner done; benchmarks/ records which.)
    for (const char* p : {"/usr", "/lib", "/lib64", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf",
                          "/etc/hosts", "/etc/host.conf", "/etc/gai.conf", "/etc/localtime", "/etc/resolv.conf"})
      read.insert(p);
    write.push_back("/dev/shm");
    // ncu runs with the private HOME and TMPDIR cutegen gives it (ncu-home in the profile directory),
    // which its injected library uses; the runner inherits them. Also the user database it looks up.
    for (const char* var : {"HOME", "TMPDIR"})
      if (const char* v = std::getenv(var); v && *v && fs::path(v) != "/" && fs::is_directory(v, ec)) write.push_back(v);
    for (const char* p : {"/etc/passwd", "/etc/group"}) read.insert(p);
  }
  // Diagnosis knob like CUTEGEN_RUNNER_EXTRA_READ, never set by cutegen: more writable paths.
  if (const char* extra = std::getenv("CUTEGEN_RUNNER_EXTRA_WRITE"); extra && *extra) {
    std::stringstream parts(extra);
    std::string path;
    while (std::getline(parts, path, ':'))
      if (!path.empty() && fs::exists(path)) write.push_back(path);
  }
  read.insert(library);
  if (auto real = fs::canonical(library, ec); !ec) read.insert(real);
  for (auto it = read.begin(); it != read.end();)  // Landlock refuses a rule for a path that is not there
    it = fs::exists(*it) ? std::next(it) : read.erase(it);
  p.read_paths.assign(read.begin(), read.end());
  // /dev: the GPU's device nodes are opened read-write by the driver (and /dev/shm by some CUDA paths).
  p.write_paths = write;
  return p;
}

Status drop_capabilities() {
  for (int cap = 0; cap <= 63; ++cap)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
      return Error{fmt::format("dropping capability {} from the bounding set: {}", cap, std::strerror(errno))};
  (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0)
    return Error{fmt::format("dropping capabilities: {}", std::strerror(errno))};
  return ok_status();
}

SandboxPolicy runner_load_policy(const RunnerSandboxSettings& settings, int violation_fd) {
  SandboxPolicy p;
  // Under Nsight Compute (network: its injected library talks TCP to ncu and starts threads) the
  // runner's filter would stop the profiler itself; the file and environment confinement stay, and so
  // does the filter that keeps other processes (ncu, the worker, cutegen) out of reach.
  p.syscalls = !settings.syscalls ? SandboxPolicy::Syscalls::unrestricted
               : settings.network ? SandboxPolicy::Syscalls::profiler
                                  : SandboxPolicy::Syscalls::runner;
  p.deny_threads = settings.deny_threads;
  p.violation_fd = violation_fd;
  p.die_with_parent = false;  // already set in step 1
  return p;
}

}  // namespace cutegen
