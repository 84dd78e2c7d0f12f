// cutegen-runner: loads ONE candidate library and calls it on harness-owned buffers, in its own process.
//
//   cutegen-runner --serve SESSION.json --reply-fd N    (started by the worker: docs/judge.md)
//   cutegen-runner --job JOB.json --result RESULT.json  (a profiling run under Nsight Compute)
//
// The buffers belong to the reference worker and arrive as CUDA IPC handles; the runner never sees
// reference outputs. Once the candidate is loaded this process is hostile territory: its constructors,
// its host code and anything they patch run here, so nothing the runner says is taken on trust -- the
// worker times every call on its own clock, checks every answer itself, and reads the runner's end
// from waitpid. What the runner does for the judge is confine itself before loading the candidate
// (runner_sandbox.h) and answer each command promptly. A kernel with a workspace (contract v2) is asked
// its size at `load` and the runner reports it; the worker then starts a second runner whose session
// names the workspace, so every buffer, that one too, is mapped before the sandbox closes. It writes nothing on stdout or stderr: those
// are sockets only the worker reads, and anything on them came from the candidate. It waits for the GPU by
// polling (run/polled_wait.h), so that its CPU time inside a call, which the worker reads from the
// kernel, is the candidate's host code and not a spinning wait.
//
// The runner launches no kernels of its own (its ping is a cudaMemsetAsync, which Nsight Compute does
// not profile). A kernel added here must be named `cutegen_harness_*`: `cutegen profile` filters that
// prefix out so the profile shows the candidate's kernels only.
#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include <cuda_runtime.h>
#include <cutegen/kernel.h>
#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "common/json_text.h"
#include "compile/entry_points.h"
#include "run/command_reader.h"
#include "run/polled_wait.h"
#include "run/runner_job.h"
#include "run/runner_sandbox.h"

namespace cutegen {
namespace {

using Forward = int (*)(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t, cudaStream_t);
using ForwardWs = int (*)(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t, void*, size_t, cudaStream_t);
using WorkspaceBytes = size_t (*)(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t);

// The loaded candidate: one of the contract's two forms (compile/entry_points.h).
struct Candidate {
  Forward forward = nullptr;       // version 1
  ForwardWs forward_ws = nullptr;  // version 2, with `workspace_bytes` bytes of workspace
  uint64_t workspace_bytes = 0;
};

// Where the call's workspace lives: the worker's buffer, mapped at setup (none for a version-1 kernel).
struct Workspace {
  void* data = nullptr;
  uint64_t bytes = 0;
};

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Writes whole lines to a descriptor (the reply pipe), retrying short writes.
void write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(5);  // the worker is gone: nothing left to do
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Lines from stdin, without their newline; empty optional at end of input.

// The worker's buffers, opened once per IPC handle, turned into contract descriptors.
class Buffers {
 public:
  Result<cutegen_tensor> descriptor(const TensorRef& r) {
    cutegen_tensor t{};
    t.dtype = static_cast<int32_t>(r.dtype);
    t.rank = static_cast<int32_t>(r.shape.size());
    for (std::size_t i = 0; i < r.shape.size() && i < CUTEGEN_MAX_RANK; ++i) {
      t.shape[i] = r.shape[i];
      t.stride[i] = r.stride[i];
    }
    if (r.is_scalar) {
      t.is_host_scalar = 1;
      t.scalar_f = r.scalar_f;
      t.scalar_i = r.scalar_i;
      return t;
    }
    if (!r.ipc_handle) return Error{"a tensor ref without an IPC handle cannot cross into the runner"};
    void* base = nullptr;
    if (auto it = opened_.find(*r.ipc_handle); it != opened_.end()) {
      base = it->second;
    } else {
      cudaIpcMemHandle_t h;
      std::memcpy(&h, r.ipc_handle->data(), sizeof h);
      if (auto e = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess); e != cudaSuccess)
        return Error{"cudaIpcOpenMemHandle: " + cuda_error_text(e)};
      opened_[*r.ipc_handle] = base;
    }
    t.data = static_cast<char*>(base) + r.offset;
    return t;
  }

 private:
  std::map<std::array<unsigned char, 64>, void*> opened_;
};

constexpr size_t kSweepBytes = size_t(128) << 20;

struct Cuda {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEvent_t legacy_done = nullptr;  // recorded on the legacy default stream at the end of a call (wait_for_gpu)
  // The same two points for GpuWait::block: events made with cudaEventBlockingSync, so that synchronising
  // on them puts this thread to sleep in the driver until the GPU's interrupt instead of polling or spinning.
  cudaEvent_t stream_done_blocking = nullptr, legacy_done_blocking = nullptr;
  GpuWait wait = GpuWait::spin;       // the session's choice; a profiling run keeps the spinning wait
  void* ping_buffer = nullptr;
  void* sweep_buffer = nullptr;  // kSweepBytes, for pings with `sweep`
};

// The CUDA context, our stream (non-blocking: work a candidate hides on the legacy default stream is not
// ordered with it, so its events miss that work and the worker's clock exposes it) and events.
Result<Cuda> start_cuda(int device) {
  Cuda c;
  if (auto e = cudaSetDevice(device); e != cudaSuccess) return Error{"cudaSetDevice: " + cuda_error_text(e)};
  // Spin while synchronising instead of yielding or sleeping: the wake-up after a long kernel would
  // otherwise add latency the calibration's empty calls do not see (command_reader.h says the same
  // for the command pipe). Before the context exists, so it applies to it.
  if (auto e = cudaSetDeviceFlags(cudaDeviceScheduleSpin); e != cudaSuccess)
    return Error{"cudaSetDeviceFlags: " + cuda_error_text(e)};
  if (auto e = cudaFree(nullptr); e != cudaSuccess) return Error{"creating the CUDA context: " + cuda_error_text(e)};
  if (auto e = cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking); e != cudaSuccess)
    return Error{"cudaStreamCreate: " + cuda_error_text(e)};
  if (cudaEventCreate(&c.start) != cudaSuccess || cudaEventCreate(&c.stop) != cudaSuccess ||
      cudaEventCreateWithFlags(&c.legacy_done, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventCreateWithFlags(&c.stream_done_blocking, cudaEventBlockingSync | cudaEventDisableTiming) != cudaSuccess ||
      cudaEventCreateWithFlags(&c.legacy_done_blocking, cudaEventBlockingSync | cudaEventDisableTiming) != cudaSuccess)
    return Error{"cudaEventCreate failed"};
  // One blocking-sync wait now, before the candidate's filter: whatever the driver sets up for its first one
  // (an interrupt wait on the device file) is then done while the runner still may.
  if (cudaEventRecord(c.stream_done_blocking, c.stream) != cudaSuccess ||
      cudaEventSynchronize(c.stream_done_blocking) != cudaSuccess)
    return Error{"a first blocking-sync wait on the GPU failed"};
  if (auto e = cudaMalloc(&c.ping_buffer, 256); e != cudaSuccess) return Error{"cudaMalloc: " + cuda_error_text(e)};
  // Larger than any current GPU's L2 (H200: 60 MiB): a sweeping ping evicts it, as a call does.
  if (auto e = cudaMalloc(&c.sweep_buffer, kSweepBytes); e != cudaSuccess)
    return Error{"cudaMalloc of the calibration's sweep buffer: " + cuda_error_text(e)};
  return c;
}

// A call's memory: what it reads (inputs, parameters) and what it writes (output set 0).
struct FootprintRegion {
  void* data = nullptr;
  uint64_t nbytes = 0;
  bool written = false;
};

// Touches every byte of the footprint on our stream: reads through the sweep buffer, writes by memset
// (the worker poisons outputs before every call, and inputs are only read).
void sweep_footprint(const std::vector<FootprintRegion>& footprint, const Cuda& c) {
  for (const auto& r : footprint) {
    if (r.written) {
      cudaMemsetAsync(r.data, 0, r.nbytes, c.stream);
      continue;
    }
    for (uint64_t off = 0; off < r.nbytes; off += kSweepBytes)
      cudaMemcpyAsync(c.sweep_buffer, static_cast<const char*>(r.data) + off, std::min<uint64_t>(kSweepBytes, r.nbytes - off),
                      cudaMemcpyDeviceToDevice, c.stream);
  }
}

// The descriptors the workspace size is asked with: every call's shapes and dtypes, NULL data.
std::vector<cutegen_tensor> without_data(std::vector<cutegen_tensor> ts) {
  for (auto& t : ts) t.data = nullptr;
  return ts;
}

// Step 2 of the sandbox, then the candidate's code for the first time (its constructors run in dlopen),
// then, for a kernel with a workspace, its size function once (inputs and outputs without data).
Result<Candidate> load_candidate(const std::string& library, const RunnerSandboxSettings& sandbox, int violation_fd,
                                 const std::vector<cutegen_tensor>& inputs, const std::vector<cutegen_tensor>& outputs) {
  if (sandbox.narrow)
    if (auto dropped = drop_capabilities(); !dropped) return Error{dropped.error().message};
  auto applied = apply_sandbox(runner_load_policy(sandbox, violation_fd));
  if (!applied) return Error{"applying the system-call filter: " + applied.error().message};
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return Error{std::string("cannot load the candidate library: ") + dlerror()};
  Candidate c;
  c.forward = reinterpret_cast<Forward>(dlsym(lib, kForwardSymbol));
  c.forward_ws = reinterpret_cast<ForwardWs>(dlsym(lib, kForwardWsSymbol));
  auto size = reinterpret_cast<WorkspaceBytes>(dlsym(lib, kWorkspaceBytesSymbol));
  auto form = entry_form({c.forward != nullptr, size != nullptr, c.forward_ws != nullptr});
  if (!form) return Error{"the library " + form.error().message};
  if (*form == EntryForm::workspace) {
    auto in = without_data(inputs);
    auto out = without_data(outputs);
    c.workspace_bytes = size(in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()));
  }
  return c;
}

std::string return_code_name(int rc) {
  if (rc == CUTEGEN_ERROR_BAD_ARGUMENTS) return "CUTEGEN_ERROR_BAD_ARGUMENTS";
  if (rc == CUTEGEN_ERROR_UNSUPPORTED) return "CUTEGEN_ERROR_UNSUPPORTED";
  if (rc > 0 && rc < 1000) return cudaGetErrorName(static_cast<cudaError_t>(rc));
  return "";
}

struct GpuDone {
  cudaError_t stream = cudaSuccess, device = cudaSuccess;
};

// The end of a call or a ping, once `stop` is recorded on our stream: our stream done, then the legacy
// default stream (which waits for every blocking stream: the other half of
// attacks/outside_the_call/leftover_half.cu), then
// the two synchronisations, which return at once unless the candidate's work sits on a stream neither
// covers (a non-blocking one it made through the driver: that wait spins, and counts as its host time).
// How the first two waits are done is the session's GpuWait: `block` sleeps in the driver on blocking-sync
// events (no CPU while the GPU works, so the runner's CPU time inside a call is its host code's), `poll`
// queries with short sleeps (run/polled_wait.h), `spin` leaves it to the synchronisations, as before either.
//
// Both streams are waited for with ONE wait: the legacy stream is made to wait for `stop`, and the event
// after that is the one slept on. Two waits in turn (our stream, then the legacy one) let work on the
// legacy stream hide in the first wait's wake-up latency: the second wait then found it finished, while a
// ping paid both wake-ups, so up to one wake-up (tens of microseconds on an H100) of hidden work was free
// (attacks/outside_the_call/side_stream_tiny.cu passed at the time of its kernel on the legacy stream alone).
GpuDone wait_for_gpu(const Cuda& c) {
  if (c.wait == GpuWait::block) {
    if (cudaStreamWaitEvent(cudaStreamLegacy, c.stop, 0) == cudaSuccess &&
        cudaEventRecord(c.legacy_done_blocking, cudaStreamLegacy) == cudaSuccess)
      cudaEventSynchronize(c.legacy_done_blocking);
  }
  if (c.wait == GpuWait::poll) {
    if (cudaStreamWaitEvent(cudaStreamLegacy, c.stop, 0) == cudaSuccess &&
        cudaEventRecord(c.legacy_done, cudaStreamLegacy) == cudaSuccess)
      wait_polling([&] { return cudaEventQuery(c.legacy_done) != cudaErrorNotReady; });
  }
  if (c.wait == GpuWait::hybrid) {
    // Both events at the same point of the legacy stream: the first is queried while spinning, the second
    // (blocking-sync) slept on once the spin's budget is spent. Still one wait covering both streams.
    if (cudaStreamWaitEvent(cudaStreamLegacy, c.stop, 0) == cudaSuccess &&
        cudaEventRecord(c.legacy_done, cudaStreamLegacy) == cudaSuccess &&
        cudaEventRecord(c.legacy_done_blocking, cudaStreamLegacy) == cudaSuccess &&
        !spin_until([&] { return cudaEventQuery(c.legacy_done) != cudaErrorNotReady; }, kHybridSpin))
      cudaEventSynchronize(c.legacy_done_blocking);
  }
  GpuDone done;
  done.stream = cudaStreamSynchronize(c.stream);
  done.device = cudaDeviceSynchronize();
  return done;
}

// One call of the candidate, timed with events on our stream (a hint), then a full synchronisation:
// the reply goes out only once the GPU is idle, as far as this process can tell.
std::string call_once(const Candidate& candidate, const Workspace& workspace, const Cuda& cuda,
                      const std::vector<cutegen_tensor>& in, const std::vector<cutegen_tensor>& out,
                      const std::string& nonce, bool& fatal) {
  const auto n_in = static_cast<int32_t>(in.size());
  const auto n_out = static_cast<int32_t>(out.size());
  cudaEventRecord(cuda.start, cuda.stream);
  // The size the kernel asked for, not the buffer's (rounded up to whole pages; the worker poisons all of it).
  int rc = candidate.forward_ws
               ? candidate.forward_ws(in.data(), n_in, out.data(), n_out, workspace.data, candidate.workspace_bytes,
                                      cuda.stream)
               : candidate.forward(in.data(), n_in, out.data(), n_out, cuda.stream);
  cudaError_t launch = cudaGetLastError();
  cudaEventRecord(cuda.stop, cuda.stream);
  auto [sync, device] = wait_for_gpu(cuda);
  cudaError_t first = launch != cudaSuccess ? launch : sync != cudaSuccess ? sync : device;
  float ms = 0;
  if (first == cudaSuccess) cudaEventElapsedTime(&ms, cuda.start, cuda.stop);
  fatal = first != cudaSuccess;  // a CUDA error is sticky: the context is unusable afterwards
  return call_reply(nonce, rc, return_code_name(rc), first == cudaSuccess ? "" : cuda_error_text(first), ms);
}

std::string reply_line(const nlohmann::json& j) { return dump_json(j) + "\n"; }

int serve(const RunnerSession& session, int reply_fd) {
  auto fail_setup = [&](const std::string& message) {
    write_all(reply_fd, reply_line({{"setup", false}, {"message", message}}));
    return 3;
  };
  auto driver_dir = preload_driver_library();
  auto start = apply_sandbox(runner_start_policy(session.sandbox, session.private_dir, session.library,
                                                 loaded_libraries(), driver_dir));
  if (!start) return fail_setup("the runner's sandbox: " + start.error().message);
  auto cuda = start_cuda(session.device);
  if (!cuda) return fail_setup(cuda.error().message);
  cuda->wait = session.wait;
  if (session.wait == GpuWait::poll) tighten_timer_slack();  // this thread polls; see polled_wait.h
  Buffers buffers;
  std::vector<cutegen_tensor> inputs;  // forward inputs (scalars filled per call), then parameters
  std::vector<std::size_t> scalar_slots;
  for (std::size_t i = 0; i < session.inputs.size(); ++i) {
    if (!session.inputs[i]) {
      scalar_slots.push_back(i);
      inputs.emplace_back(cutegen_tensor{});
      continue;
    }
    auto d = buffers.descriptor(*session.inputs[i]);
    if (!d) return fail_setup(d.error().message);
    inputs.push_back(*d);
  }
  for (const auto& p : session.params) {
    auto d = buffers.descriptor(p);
    if (!d) return fail_setup(d.error().message);
    inputs.push_back(*d);
  }
  std::vector<std::vector<cutegen_tensor>> outputs;
  for (const auto& set : session.outputs) {
    outputs.emplace_back();
    for (const auto& r : set) {
      auto d = buffers.descriptor(r);
      if (!d) return fail_setup(d.error().message);
      outputs.back().push_back(*d);
    }
  }
  std::vector<FootprintRegion> footprint;
  for (std::size_t i = 0; i < session.inputs.size(); ++i)
    if (session.inputs[i]) footprint.push_back({inputs[i].data, session.inputs[i]->nbytes, false});
  for (std::size_t i = 0; i < session.params.size(); ++i)
    footprint.push_back({inputs[session.inputs.size() + i].data, session.params[i].nbytes, false});
  if (!session.outputs.empty())
    for (std::size_t i = 0; i < session.outputs.front().size(); ++i)
      footprint.push_back({outputs.front()[i].data, session.outputs.front()[i].nbytes, true});
  Workspace workspace;
  if (session.workspace) {
    auto d = buffers.descriptor(*session.workspace);
    if (!d) return fail_setup("the workspace: " + d.error().message);
    workspace = {d->data, session.workspace->nbytes};
  }
  nlohmann::json setup = {{"setup", true}, {"sandbox", start->summary()}};
  write_all(reply_fd, reply_line(setup));

  std::optional<Candidate> candidate;
  // Spins between commands for up to 200 ms (command_reader.h: why), then sleeps until the next.
  CommandReader reader(STDIN_FILENO, std::chrono::milliseconds(200));
  while (auto line = reader.next()) {
    auto command = parse_runner_command(*line);
    if (!command) {
      write_all(reply_fd, reply_line({{"error", command.error().message}}));
      continue;
    }
    switch (command->op) {
      case RunnerCommand::Op::quit:
        return 0;
      case RunnerCommand::Op::ping: {
        // A call's path with the harness's own work in the candidate's place: a memset, never a kernel
        // of ours — the runner compiles nothing at run time, so the driver's PTX compiler stays out of
        // the process (runner_sandbox.cpp keeps it unreadable: a candidate could use it to run raw PTX).
        cudaEventRecord(cuda->start, cuda->stream);
        for (int r = 0; r < command->repeat; ++r) {
          if (command->sweep == RunnerCommand::Sweep::own)
            cudaMemsetAsync(cuda->sweep_buffer, 0, kSweepBytes, cuda->stream);
          else if (command->sweep == RunnerCommand::Sweep::footprint)
            sweep_footprint(footprint, *cuda);
          else
            cudaMemsetAsync(cuda->ping_buffer, 0, 4, cuda->stream);
        }
        cudaGetLastError();
        cudaEventRecord(cuda->stop, cuda->stream);
        (void)wait_for_gpu(*cuda);  // the calls' own wait, so the round trip subtracted from them includes it
        float ms = 0;
        cudaEventElapsedTime(&ms, cuda->start, cuda->stop);
        write_all(reply_fd, reply_line({{"nonce", command->nonce}, {"pong", true}, {"event_ms", ms}}));
        break;
      }
      case RunnerCommand::Op::load: {
        auto sized = inputs;  // the size is asked with the host scalars the worker sent
        for (std::size_t slot : scalar_slots)
          if (slot < command->scalars.size() && command->scalars[slot])
            if (auto d = buffers.descriptor(*command->scalars[slot])) sized[slot] = *d;
        auto loaded = load_candidate(session.library, session.sandbox, reply_fd, sized, outputs.front());
        // The size is reported whatever the session mapped: a first runner has no workspace yet, and one
        // mapped at a guessed size may find the kernel asking for more. The worker compares the two and
        // starts another runner with the size asked; a call with a workspace short of it is refused below.
        if (!loaded) {
          write_all(reply_fd, reply_line({{"nonce", command->nonce}, {"ready", false}, {"failure", "load"},
                                          {"message", loaded.error().message}}));
          return 4;
        }
        candidate = *loaded;
        write_all(reply_fd, load_reply(command->nonce, candidate->forward_ws
                                                           ? std::optional<uint64_t>(candidate->workspace_bytes)
                                                           : std::nullopt));
        break;
      }
      case RunnerCommand::Op::call: {
        if (!candidate || command->output_set < 0 || command->output_set >= static_cast<int>(outputs.size()) ||
            command->scalars.size() != session.inputs.size()) {
          write_all(reply_fd, reply_line({{"nonce", command->nonce}, {"error", "call before load, or a bad set"}}));
          break;
        }
        if (auto fits = check_workspace_buffer(candidate->workspace_bytes, session.workspace); !fits) {
          write_all(reply_fd, reply_line({{"nonce", command->nonce}, {"error", fits.error().message}}));
          break;
        }
        for (std::size_t slot : scalar_slots) {
          if (!command->scalars[slot]) continue;
          auto d = buffers.descriptor(*command->scalars[slot]);
          if (d) inputs[slot] = *d;
        }
        bool fatal = false;
        write_all(reply_fd,
                  call_once(*candidate, workspace, *cuda, inputs, outputs[command->output_set], command->nonce, fatal));
        if (fatal) return 4;
        break;
      }
    }
  }
  return 0;  // the worker closed our stdin
}

// A profiling run: `calls` calls on one set of buffers, for Nsight Compute to watch. The result file says
// how far it got (read only to explain a failed profile, never for a verdict).
int profile(const RunnerProfileJob& job, const std::string& result_path) {
  nlohmann::json result = {{"phase", "setup"}, {"failure", nullptr}};
  auto fail = [&](const std::string& failure, const std::string& message, int code) {
    result["failure"] = failure;
    result["message"] = message;
    (void)write_file_atomic(result_path, dump_json(result));
    return code;
  };
  auto driver_dir = preload_driver_library();
  auto start = apply_sandbox(
      runner_start_policy(job.sandbox, job.private_dir, job.library, loaded_libraries(), driver_dir));
  if (!start) return fail("setup", "the runner's sandbox: " + start.error().message, 3);
  auto cuda = start_cuda(job.device);
  if (!cuda) return fail("setup", cuda.error().message, 3);
  Buffers buffers;
  std::vector<cutegen_tensor> in, out;
  for (const auto& r : job.inputs) {
    auto d = buffers.descriptor(r);
    if (!d) return fail("setup", d.error().message, 3);
    in.push_back(*d);
  }
  for (const auto& r : job.outputs) {
    auto d = buffers.descriptor(r);
    if (!d) return fail("setup", d.error().message, 3);
    out.push_back(*d);
  }
  Workspace workspace;
  if (job.workspace) {
    auto d = buffers.descriptor(*job.workspace);
    if (!d) return fail("setup", "the workspace: " + d.error().message, 3);
    workspace = {d->data, job.workspace->nbytes};
  }
  auto candidate = load_candidate(job.library, job.sandbox, STDERR_FILENO, in, out);
  if (!candidate) return fail("load", candidate.error().message, 4);
  if (auto fits = check_workspace_buffer(candidate->workspace_bytes, job.workspace); !fits)
    return fail("load", fits.error().message, 4);
  result["phase"] = "calls";
  (void)write_file_atomic(result_path, dump_json(result));
  for (int i = 0; i < job.calls; ++i) {
    bool fatal = false;
    auto reply = nlohmann::json::parse(call_once(*candidate, workspace, *cuda, in, out, "profile", fatal));
    if (fatal) return fail("cuda_error", reply.value("cuda_error", ""), 5);
    if (reply.value("rc", 0) != 0) return fail("kernel_error", "cutegen_forward returned " + reply["rc"].dump(), 5);
  }
  result["phase"] = "done";
  (void)write_file_atomic(result_path, dump_json(result));
  return 0;
}

Result<nlohmann::json> read_json(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Error{path + " is not JSON"};
  return j;
}

}  // namespace
}  // namespace cutegen

int main(int argc, char** argv) {
  std::string serve_path, job_path, result_path;
  int reply_fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--serve") serve_path = argv[i + 1];
    else if (a == "--reply-fd") reply_fd = std::atoi(argv[i + 1]);
    else if (a == "--job") job_path = argv[i + 1];
    else if (a == "--result") result_path = argv[i + 1];
  }
  if (!serve_path.empty() && reply_fd >= 0) {
    // Replies always leave on descriptor 3 (docs/judge.md): the worker passes whatever number its pipe got.
    if (reply_fd != 3) {
      if (dup2(reply_fd, 3) < 0) return 2;
      close(reply_fd);
      reply_fd = 3;
    }
    auto j = cutegen::read_json(serve_path);
    auto session = j ? cutegen::parse_runner_session(*j) : cutegen::Result<cutegen::RunnerSession>(j.error());
    if (!session) {
      cutegen::write_all(reply_fd, cutegen::reply_line({{"setup", false}, {"message", session.error().message}}));
      return 2;
    }
    return cutegen::serve(*session, reply_fd);
  }
  if (!job_path.empty() && !result_path.empty()) {
    auto j = cutegen::read_json(job_path);
    auto job = j ? cutegen::parse_runner_profile_job(*j) : cutegen::Result<cutegen::RunnerProfileJob>(j.error());
    if (!job) {
      (void)cutegen::write_file_atomic(result_path,
                                       nlohmann::json{{"phase", "setup"}, {"failure", "setup"}, {"message", job.error().message}}.dump());
      return 2;
    }
    return cutegen::profile(*job, result_path);
  }
  std::fprintf(stderr,
               "usage: cutegen-runner --serve SESSION.json --reply-fd N   (started by the worker)\n"
               "       cutegen-runner --job JOB.json --result RESULT.json (a profiling run)\n");
  return 2;
}
