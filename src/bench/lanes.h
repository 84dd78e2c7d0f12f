#pragma once
// Lanes: one per GPU a suite may use (or one for the CPU). Each lane has a device lock that every
// cutegen process on the host naming that GPU shares, so measurements on one GPU never overlap even
// across suites; compiles and LLM calls of the tasks in flight run alongside.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/result.h"

namespace cutegen::bench {

struct Lane {
  std::string name;          // "gpu0", "gpu2", "cpu"
  std::string visible;       // CUDA_VISIBLE_DEVICES for a task process on this lane ("" for the CPU)
  std::string torch_device;  // the worker's device inside this process: "cuda:N" or "cpu"
  std::string key;           // what the lock is named after: the GPU's UUID where known
  std::filesystem::path lock_file;
};

struct GpuListing {
  int index = 0;
  std::string name, uuid;
};
// Parses `nvidia-smi -L` ("GPU 0: NVIDIA H200 (UUID: GPU-...)"); other lines are skipped.
std::vector<GpuListing> parse_nvidia_smi_list(const std::string& text);

// Where device locks live: $CUTEGEN_LOCK_DIR, else /tmp/cutegen-device-locks (per host, shared by users).
std::filesystem::path device_lock_dir();
// Creates it; a directory made here is world-writable and sticky, like /tmp, so every user's runs
// can create the lock of a GPU first. Error: it cannot be created.
Status ensure_device_lock_dir(const std::filesystem::path& dir);

// device "cpu": the one CPU lane (`gpus` must be "all"). device "cuda": `gpus` is "all" or indices
// ("0,2"); with CUDA_VISIBLE_DEVICES set (Slurm sets it) the indices are positions in it, else
// nvidia-smi's indices. `visible_env`: CUDA_VISIBLE_DEVICES (null: unset); `smi`: nvidia-smi -L's
// output, or "" when it could not run. Error: one line (no GPU, an index that does not exist).
Result<std::vector<Lane>> resolve_lanes(const std::string& device, const std::string& gpus, const char* visible_env,
                                        const std::string& smi);

// nvidia-smi -L's output through `runner`, or "" when it is missing or fails.
std::string list_gpus(ProcessRunner& runner);

// Each lane times with two processes that must get a CPU the moment they are ready, and each task in
// flight beyond the lanes may be compiling beside them (two processes, three from 4 CPUs where nvcc's
// steps overlap). A warning when that is more than
// the host's CPUs (the judge then refuses measurements as too busy, docs/judge.md), naming the -j
// that fits; nothing when it fits. Pure.
std::optional<std::string> cpu_oversubscription_warning(int jobs, int lanes, long cpus);

}  // namespace cutegen::bench
