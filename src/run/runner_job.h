#pragma once
// What cutegen-runner is given, free of CUDA so it is parsed and tested on machines without a GPU.
//
// Two modes (docs/judge.md, "The runner session"):
//   --serve SESSION.json --reply-fd N   the worker's supervised session: the slot's buffers, the library,
//                                       then commands on stdin (ping, load, call, quit), replies on fd N;
//   --job JOB.json --result RESULT.json a profiling run under Nsight Compute: `calls` calls on one set of
//                                       buffers, nothing checked (the judge already passed the kernel).
// Everything the runner reports is a hint from a process that runs hostile code; the worker verifies.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "run/tensor_ref.h"

namespace cutegen {

// How much of the sandbox the runner applies to itself (CUTEGEN_RUNNER_SANDBOX in the worker's
// environment sets it; docs/judge.md). Off only for diagnosing a machine where CUDA breaks inside it.
struct RunnerSandboxSettings {
  bool files = true;         // Landlock: read the system and the library, write only the private directory
  bool syscalls = true;      // seccomp `runner` profile (`profiler` under ncu) before the library is loaded
  bool deny_threads = true;  // part of the seccomp profile: no new threads once the library is loaded
  bool network = false;      // TCP allowed (profiling: Nsight Compute's injected library talks TCP)
  // Of /proc only the runner's own entries and the driver's, of /dev only the GPU's nodes, and no
  // capabilities once the candidate is loaded: a root runner could otherwise read any process's
  // environment, and /dev/shm was writable (benchmarks/results.md). The worker asks for it
  // by default (CUTEGEN_RUNNER_SANDBOX=full); a session file that says nothing gets it too.
  bool narrow = true;
};
Result<RunnerSandboxSettings> parse_sandbox_settings(const nlohmann::json& j);  // absent fields: defaults
// The named presets of CUTEGEN_RUNNER_SANDBOX (full, wide, threads, syscalls-only, files-only, off) as
// the job's `sandbox` object; the worker's table (candidate_session.py) has the same names and values.
Result<nlohmann::json> runner_sandbox_preset(const std::string& name);

// How the runner waits for the GPU at the end of a call and a ping (CUTEGEN_RUNNER_WAIT in the worker's
// environment): `hybrid` (the default), spin for up to kHybridSpin (run/polled_wait.h), then sleep as `block`
// does, so a call of a few microseconds is not charged the blocking wait's wake-up and the runner's CPU time
// inside a call stays its host code's (the worker judges host computing by it, the spin charged once); `block`,
// asleep in the driver on blocking-sync events from the start (on the H200 the wait cost 13 % of the time
// waited in CPU and the interrupt's wake-up added ~0.07 ms to a 3.5 ms call's round trip against the spin);
// `poll` with short sleeps (run/polled_wait.h), whose queries cost half the time waited on the H200 -- above
// the share at which the worker turns the check off -- kept for the A/B; `spin`, the wait before the others
// existed (the worker then does not judge host computing). docs/judge.md, "Known limits".
enum class GpuWait { block, poll, spin, hybrid };

struct RunnerSession {
  std::string library;
  int device = 0;
  std::string private_dir;                       // the only place the runner may write
  std::vector<std::optional<TensorRef>> inputs;  // forward inputs; nullopt for a host scalar (sent per call)
  std::vector<TensorRef> params;                 // parameters then buffers
  std::vector<std::vector<TensorRef>> outputs;   // the output sets (two)
  // The workspace of a kernel with one (contract v2): a uint8 buffer the worker allocated and poisons
  // before every call. Absent until the worker has learnt the size: it then starts a second runner
  // with it, so every buffer is still mapped before the sandbox closes (docs/judge.md).
  std::optional<TensorRef> workspace;
  RunnerSandboxSettings sandbox;
  GpuWait wait = GpuWait::hybrid;  // `wait`: "hybrid" (also when absent), "block", "poll" or "spin"
};
Result<RunnerSession> parse_runner_session(const nlohmann::json& j);

struct RunnerProfileJob {
  std::string library;
  int device = 0;
  std::string private_dir;
  std::vector<TensorRef> inputs;   // forward inputs (scalars included), then parameters and buffers
  std::vector<TensorRef> outputs;
  std::optional<TensorRef> workspace;  // for a kernel with one; at least the size the evaluation recorded
  int calls = 1;
  RunnerSandboxSettings sandbox;
};
Result<RunnerProfileJob> parse_runner_profile_job(const nlohmann::json& j);

// One command of the serve protocol (a JSON line on stdin).
struct RunnerCommand {
  enum class Op { ping, load, call, quit };
  Op op = Op::ping;
  std::string nonce;                           // echoed in the reply
  int output_set = 0;                          // call
  // ping: what runs in place of the candidate. `own`: a memset of the runner's own 128 MiB buffer, so
  // the GPU's caches are left cold as a call that streams through its tensors leaves them (the
  // calibration's gathers). `footprint`: every byte of the call's inputs and parameters read (copied
  // through that buffer) and of output set 0 written — a call's whole memory footprint, for its TLB
  // state too (the gather after a multi-GB call measured 0.1-0.3 ms above the `own` calibration on
  // the H200; which of the two the judge uses is decided by measurement, docs/judge.md).
  enum class Sweep { none, own, footprint };
  Sweep sweep = Sweep::none;
  // ping: how many times the sweep runs (1 to kMaxPingRepeat). A long ping — milliseconds of the GPU's
  // memset — is how the worker measures what the runner's polled wait costs in CPU time per time waited
  // on this machine (python/cutegen_worker/cpu_time.py), before the candidate is loaded.
  static constexpr int kMaxPingRepeat = 1024;
  int repeat = 1;
  // call: one per forward input, a scalar ref or nullopt. load: the host scalars the workspace size is
  // asked with (the problem's own; sizes may depend only on shapes and dtypes).
  std::vector<std::optional<TensorRef>> scalars;
};
Result<RunnerCommand> parse_runner_command(const std::string& line);

// The reply line to `load` when the library loaded: `workspace_bytes` is what cutegen_workspace_bytes
// asked for, null for a kernel without a workspace. The worker validates it; the runner only reports it.
std::string load_reply(const std::string& nonce, std::optional<uint64_t> workspace_bytes);

// Whether the workspace buffer mapped serves a kernel that asked for `want` bytes: a one-line error
// otherwise, for the runner's refusal of a call (the worker sized it, but the runner checks before it
// hands a pointer to the candidate) and a profile job's load failure.
Status check_workspace_buffer(uint64_t want, const std::optional<TensorRef>& buffer);

// The reply line to a call: the kernel's return code (named when it is a contract code or a CUDA
// error), the CUDA error if any, and the time the stream's events saw.
std::string call_reply(const std::string& nonce, int rc, const std::string& rc_name, const std::string& cuda_error,
                       double event_ms);

}  // namespace cutegen
