// GPU check (scripts/gpu-check, stage `sandbox`): does CUDA keep working in a process that confined
// itself with the runner profile after creating its context, as cutegen-runner does before it loads a
// candidate, and are its parent and local sockets out of reach there? One line per step; exit 0 when every step worked, 1 when a CUDA call failed, 97 (with
// "sandbox: <call>" on stderr) when the filter trapped a call CUDA made.
//   sandbox-cuda-check [--allow-threads] [--no-landlock]
#include <cuda_runtime.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/sandbox.h"

namespace fs = std::filesystem;

namespace {

int failures = 0;

void step(const char* name, cudaError_t err) {
  if (err == cudaSuccess) {
    std::printf("ok   %s\n", name);
  } else {
    std::printf("FAIL %s: %s\n", name, cudaGetErrorString(err));
    ++failures;
  }
  std::fflush(stdout);
}

// A call the sandbox must refuse with EPERM (err: its errno, 0 when it worked).
void refused(const char* name, int err) {
  if (err == EPERM) {
    std::printf("ok   %s refused\n", name);
  } else {
    std::printf("FAIL %s: %s\n", name, err ? std::strerror(err) : "it worked");
    ++failures;
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool allow_threads = false, landlock = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--allow-threads") allow_threads = true;
    else if (a == "--no-landlock") landlock = false;
    else {
      std::fprintf(stderr, "usage: sandbox-cuda-check [--allow-threads] [--no-landlock]\n");
      return 2;
    }
  }
  // Before the sandbox, as the runner: context, a buffer, a stream.
  step("context (cudaFree(0))", cudaFree(nullptr));
  void* before = nullptr;
  step("cudaMalloc before", cudaMalloc(&before, 1 << 20));
  cudaStream_t stream{};
  step("cudaStreamCreateWithFlags before", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cutegen::SandboxPolicy policy;
  policy.syscalls = cutegen::SandboxPolicy::Syscalls::runner;
  policy.deny_threads = !allow_threads;
  if (landlock) {
    for (const char* p : {"/usr", "/lib", "/lib64", "/etc", "/proc", "/sys"})
      if (fs::exists(p)) policy.read_paths.emplace_back(p);
    // The runner writes only its private directory and the GPU devices (docs/judge.md, section 6).
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/dev", ec))
      if (e.path().filename().string().rfind("nvidia", 0) == 0) policy.write_paths.push_back(e.path());
    auto tmp = fs::temp_directory_path() / ("sandbox-cuda-check-" + std::to_string(::getpid()));
    fs::create_directories(tmp, ec);
    policy.write_paths.push_back(tmp);
  }
  auto report = cutegen::apply_sandbox(policy);
  if (!report) {
    std::printf("FAIL apply_sandbox: %s\n", report.error().message.c_str());
    return 1;
  }
  std::printf("sandbox: runner profile%s; %s\n", allow_threads ? " (threads allowed)" : "", report->summary().c_str());
  std::fflush(stdout);

  // After it, what a candidate's call and the runner's timing do.
  step("cudaMemsetAsync", cudaMemsetAsync(before, 0, 1 << 20, stream));
  step("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  std::vector<char> host(1 << 20, 1);
  step("cudaMemcpy D2H", cudaMemcpy(host.data(), before, host.size(), cudaMemcpyDeviceToHost));
  cudaEvent_t start{}, stop{};
  step("cudaEventCreate", cudaEventCreate(&start));
  step("cudaEventCreate", cudaEventCreate(&stop));
  step("cudaEventRecord", cudaEventRecord(start, stream));
  step("cudaMemsetAsync timed", cudaMemsetAsync(before, 1, 1 << 20, stream));
  step("cudaEventRecord", cudaEventRecord(stop, stream));
  step("cudaEventSynchronize", cudaEventSynchronize(stop));
  float ms = 0;
  step("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start, stop));
  void* after = nullptr;
  step("cudaMalloc after", cudaMalloc(&after, 64 << 20));
  cudaIpcMemHandle_t handle{};
  step("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&handle, after));
  step("cudaDeviceSynchronize", cudaDeviceSynchronize());
  step("cudaFree", cudaFree(after));
  // And the sandbox holds on this machine's kernel: the parent (the worker, in cutegen) and local
  // sockets are out of reach. Reads only: nothing is changed if they were not.
  errno = 0;
  ::getpriority(PRIO_PROCESS, static_cast<id_t>(::getppid()));
  refused("getpriority of the parent", errno);
  int unix_socket = ::socket(AF_UNIX, SOCK_STREAM, 0);
  refused("socket(AF_UNIX)", unix_socket < 0 ? errno : 0);
  std::printf("%s\n", failures == 0 ? "all steps worked" : "some steps failed");
  return failures == 0 ? 0 : 1;
}
