// cutegen-runner: runs ONE candidate library on harness-owned buffers, in its own process.
//
//   cutegen-runner --job job.json --result result.json
//
// The buffers belong to the reference worker and arrive as CUDA IPC handles, so nothing is copied and
// the runner never sees reference outputs. The runner is disposable: a candidate that crashes, hangs or
// corrupts the CUDA context takes only this process down; the parent reads whatever phase the result
// file reached and names the failure. Nothing is printed on stdout or stderr by the runner itself —
// anything there came from the candidate (device printf), which the judge treats as a defect. stdout
// goes to a private file that is checked after every call, so a kernel that prints is stopped after
// its first call instead of flooding (and slowing) every timed run until the timeout.
//
// The runner launches no CUDA kernels of its own (poisoning and the L2 flush are cudaMemsetAsync,
// which Nsight Compute does not profile). A kernel added here must be named `cutegen_harness_*`:
// `cutegen profile` filters that prefix out so the profile shows the candidate's kernels only.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <cuda_runtime.h>
#include <cutegen/kernel.h>
#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "common/json_text.h"
#include "run/runner_job.h"
#include "run/sample_compare.h"

namespace cutegen {
namespace {

using Forward = int (*)(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t, cudaStream_t);

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

class Runner {
 public:
  Runner(RunnerJob job, std::string result_path) : job_(std::move(job)), result_path_(std::move(result_path)) {
    result_["phase"] = "setup";
    result_["failure"] = nullptr;
  }

  int run() {
    if (!setup()) return finish(3);
    if (!correctness()) return finish(4);
    if (!job_.timing_sets.empty() && !timing()) return finish(5);
    if (job_.reuse_check && job_.timing_sets.size() >= 2 && !reuse_check()) return finish(6);
    result_["phase"] = "done";
    return finish(0);
  }

 private:
  // Records the failure and keeps the result file current: if the next step kills the process,
  // the parent still knows how far it got.
  bool fail(const std::string& failure, const std::string& message) {
    result_["failure"] = failure;
    result_["message"] = message;
    save();
    return false;
  }
  void save() { (void)write_file_atomic(result_path_, dump_json(result_, 2)); }

  // What the candidate wrote to stdout so far (main points fd 1 at a private file), as the judge's
  // one-line reason; empty when nothing. Device printf reaches stdout at synchronisation points.
  static std::string printed_output() {
    std::fflush(stdout);
    struct stat st {};
    if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return "";
    char head[160] = {};
    ssize_t n = pread(STDOUT_FILENO, head, sizeof head - 1, 0);
    std::string first(head, n > 0 ? static_cast<size_t>(n) : 0);
    first = first.substr(0, first.find('\n'));
    return "the kernel printed " + std::to_string(st.st_size) + " bytes (first line: \"" + first +
           "\"): remove printf and other output";
  }
  int finish(int code) {
    save();
    return code;
  }

  bool setup() {
    if (auto e = cudaSetDevice(job_.device); e != cudaSuccess) return fail("setup", "cudaSetDevice: " + cuda_error_text(e));
    // Non-blocking: work a candidate hides on the legacy default stream is not ordered with ours, so the
    // event timing misses it and the host-clock cross-check exposes it.
    if (auto e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); e != cudaSuccess)
      return fail("setup", "cudaStreamCreate: " + cuda_error_text(e));
    void* lib = dlopen(job_.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) return fail("load", std::string("cannot load the candidate library: ") + dlerror());
    forward_ = reinterpret_cast<Forward>(dlsym(lib, "cutegen_forward"));
    if (!forward_) return fail("load", "the library does not export cutegen_forward");
    for (auto& trial : job_.trials) {
      std::vector<cutegen_tensor> in;
      if (!descriptors(trial.inputs, in)) return false;
      std::vector<std::vector<cutegen_tensor>> outs;
      for (auto& o : trial.outputs) {
        outs.emplace_back();
        if (!descriptors(o, outs.back())) return false;
      }
      trials_.push_back({std::move(in), std::move(outs), trial.outputs});
    }
    for (auto& set : job_.timing_sets) {
      std::vector<cutegen_tensor> in, out;
      if (!descriptors(set.inputs, in) || !descriptors(set.outputs, out)) return false;
      timing_sets_.push_back({std::move(in), {std::move(out)}, {set.outputs}});
    }
    result_["phase"] = "correctness";
    save();
    return true;
  }

  bool descriptors(const std::vector<TensorRef>& refs, std::vector<cutegen_tensor>& out) {
    for (const auto& r : refs) {
      cutegen_tensor t{};
      t.dtype = static_cast<int32_t>(r.dtype);
      t.rank = static_cast<int32_t>(r.shape.size());
      for (std::size_t i = 0; i < r.shape.size(); ++i) {
        t.shape[i] = r.shape[i];
        t.stride[i] = r.stride[i];
      }
      if (r.is_scalar) {
        t.is_host_scalar = 1;
        t.scalar_f = r.scalar_f;
        t.scalar_i = r.scalar_i;
      } else {
        if (!r.ipc_handle) return fail("setup", "a tensor ref without an IPC handle cannot cross into the runner");
        void* base = nullptr;
        auto it = opened_.find(*r.ipc_handle);
        if (it != opened_.end()) {
          base = it->second;
        } else {
          cudaIpcMemHandle_t h;
          std::memcpy(&h, r.ipc_handle->data(), sizeof h);
          if (auto e = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess); e != cudaSuccess)
            return fail("setup", "cudaIpcOpenMemHandle: " + cuda_error_text(e));
          opened_[*r.ipc_handle] = base;
        }
        t.data = static_cast<char*>(base) + r.offset;
      }
      out.push_back(t);
    }
    return true;
  }

  // NaN in every float format (and -1 in integers): an element the candidate never wrote stays visible.
  bool poison(const std::vector<TensorRef>& refs, const std::vector<cutegen_tensor>& descs) {
    for (std::size_t i = 0; i < refs.size(); ++i) {
      if (refs[i].is_scalar || refs[i].nbytes == 0) continue;
      if (auto e = cudaMemsetAsync(descs[i].data, 0xFF, refs[i].nbytes, stream_); e != cudaSuccess)
        return fail("setup", "poisoning outputs: " + cuda_error_text(e));
    }
    return true;
  }

  // One call of the candidate and a full synchronisation. Returns false when the process should stop
  // (a CUDA error is sticky: the context is unusable afterwards).
  bool call(const std::vector<cutegen_tensor>& in, const std::vector<cutegen_tensor>& out, nlohmann::json& record) {
    int rc = forward_(in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()), stream_);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaStreamSynchronize(stream_);
    cudaError_t device = cudaDeviceSynchronize();
    record["return_code"] = rc;
    if (auto printed = printed_output(); !printed.empty()) return fail("printed_output", printed);
    cudaError_t first = launch != cudaSuccess ? launch : sync != cudaSuccess ? sync : device;
    if (first != cudaSuccess) {
      record["cuda_error"] = cuda_error_text(first);
      return fail("cuda_error", "CUDA error while running the kernel: " + cuda_error_text(first));
    }
    if (rc != 0) {
      std::string what = rc == CUTEGEN_ERROR_BAD_ARGUMENTS ? "CUTEGEN_ERROR_BAD_ARGUMENTS"
                         : rc == CUTEGEN_ERROR_UNSUPPORTED ? "CUTEGEN_ERROR_UNSUPPORTED"
                         : rc > 0 && rc < 1000 ? cuda_error_text(static_cast<cudaError_t>(rc))
                                               : std::to_string(rc);
      return fail("kernel_error", "cutegen_forward returned " + std::to_string(rc) + " (" + what + ")");
    }
    return true;
  }

  bool correctness() {
    nlohmann::json trials = nlohmann::json::array();
    for (auto& t : trials_) {
      nlohmann::json runs = nlohmann::json::array();
      for (std::size_t s = 0; s < t.outputs.size(); ++s) {
        if (!poison(t.output_refs[s], t.outputs[s])) return false;
        if (auto e = cudaStreamSynchronize(stream_); e != cudaSuccess) return fail("setup", cuda_error_text(e));
        nlohmann::json record;
        bool ok = call(t.inputs, t.outputs[s], record);
        runs.push_back(record);
        result_["trials"] = trials;
        result_["trials"].push_back(runs);
        if (!ok) return false;
      }
      trials.push_back(runs);
    }
    result_["trials"] = trials;
    result_["phase"] = "timing";
    save();
    return true;
  }

  bool timing() {
    void* flush = nullptr;
    if (job_.flush_bytes > 0) {
      if (auto e = cudaMalloc(&flush, job_.flush_bytes); e != cudaSuccess)
        return fail("setup", "allocating the L2 flush buffer: " + cuda_error_text(e));
    }
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<double> event_ms, host_ms;
    const int total = job_.warmup + job_.runs;
    for (int i = 0; i < total; ++i) {
      auto& set = timing_sets_[static_cast<std::size_t>(i) % timing_sets_.size()];
      // Outside the timed region: evict the inputs from L2 and re-poison the outputs, so neither a warm
      // cache nor "the output buffer still holds last call's answer" can help.
      if (flush) cudaMemsetAsync(flush, i & 0xFF, job_.flush_bytes, stream_);
      if (!poison(set.output_refs[0], set.outputs[0])) return false;
      if (auto e = cudaDeviceSynchronize(); e != cudaSuccess) return fail("cuda_error", cuda_error_text(e));
      auto h0 = std::chrono::steady_clock::now();
      cudaEventRecord(start, stream_);
      int rc = forward_(set.inputs.data(), static_cast<int32_t>(set.inputs.size()), set.outputs[0].data(),
                        static_cast<int32_t>(set.outputs[0].size()), stream_);
      cudaEventRecord(stop, stream_);
      cudaError_t e = cudaDeviceSynchronize();
      auto h1 = std::chrono::steady_clock::now();
      if (e == cudaSuccess) e = cudaGetLastError();
      if (e != cudaSuccess) return fail("cuda_error", "CUDA error during timing: " + cuda_error_text(e));
      if (rc != 0) return fail("kernel_error", "cutegen_forward returned " + std::to_string(rc) + " during timing");
      if (i < job_.warmup) continue;
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      event_ms.push_back(ms);
      host_ms.push_back(std::chrono::duration<double, std::milli>(h1 - h0).count());
    }
    result_["timing"] = {{"event", to_json(summarize(event_ms))},
                         {"host", to_json(summarize(host_ms))},
                         {"event_ms", event_ms},
                         {"host_ms", host_ms},
                         {"sets", timing_sets_.size()},
                         {"flush_bytes", job_.flush_bytes}};
    if (flush) cudaFree(flush);
    save();
    return true;
  }

  // Result reuse. A kernel that remembers answers by input pointer (in a static __device__ buffer,
  // say) passes every check above, because each timing set always holds the same inputs at the same
  // addresses. So: copy set 1's inputs into set 0's buffers, in place, and call the kernel on set 0's
  // pointers. A kernel that computes now produces set 1's result; one that replays what it made for
  // these pointers produces set 0's old answer. Set 0's inputs are restored afterwards and its outputs
  // recomputed, so the worker's check of the timed runs sees them as they were.
  bool reuse_check() {
    result_["phase"] = "reuse_check";
    save();
    Prepared& a = timing_sets_[0];
    const Prepared& b = timing_sets_[1];
    const auto& refs_a = job_.timing_sets[0].inputs;
    std::vector<void*> saved(refs_a.size(), nullptr);
    auto release = [&] {
      for (void* p : saved)
        if (p) cudaFree(p);
    };
    std::vector<cutegen_tensor> swapped = a.inputs;  // set 0's buffers, set 1's host scalars
    for (std::size_t k = 0; k < refs_a.size(); ++k) {
      if (refs_a[k].is_scalar) {
        swapped[k] = b.inputs[k];
        continue;
      }
      if (a.inputs[k].data == b.inputs[k].data) continue;  // shared (parameters): nothing to swap
      std::size_t n = refs_a[k].nbytes;
      if (cudaMalloc(&saved[k], n) != cudaSuccess || !copy_on_stream(saved[k], a.inputs[k].data, n) ||
          !copy_on_stream(a.inputs[k].data, b.inputs[k].data, n)) {
        release();
        return fail("setup", "preparing the result-reuse check: " + cuda_error_text(cudaGetLastError()));
      }
    }
    nlohmann::json record;
    if (!poison(a.output_refs[0], a.outputs[0]) || !call(swapped, a.outputs[0], record)) {
      release();
      return false;
    }
    std::string problem;
    for (std::size_t k = 0; k < a.outputs[0].size() && problem.empty(); ++k) {
      const TensorRef& ref = a.output_refs[0][k];
      std::vector<unsigned char> got, want;
      if (!sample(a.outputs[0][k].data, ref, got) || !sample(b.outputs[0][k].data, ref, want)) {
        release();
        return fail("setup", "reading outputs for the result-reuse check: " + cuda_error_text(cudaGetLastError()));
      }
      auto d = compare_samples(got, want, ref.dtype);
      if (d.nan_in_a > 0 || d.rel_l2 > 1e-2)
        problem = "output " + std::to_string(k) + " with another call's inputs copied into the same buffers " +
                  (d.nan_in_a > 0 ? "was left unwritten" : "differs from that call's result (rel L2 " +
                                                               std::to_string(d.rel_l2) + ")") +
                  ": the kernel reuses results of earlier calls for the same pointers instead of computing";
    }
    for (std::size_t k = 0; k < refs_a.size(); ++k)
      if (saved[k] && !copy_on_stream(a.inputs[k].data, saved[k], refs_a[k].nbytes)) {
        release();
        return fail("setup", "restoring inputs after the result-reuse check: " + cuda_error_text(cudaGetLastError()));
      }
    release();
    if (!problem.empty()) return fail("result_reuse", problem);
    if (!poison(a.output_refs[0], a.outputs[0]) || !call(a.inputs, a.outputs[0], record)) return false;
    result_["reuse_check"] = "passed";
    save();
    return true;
  }

  // A device-to-device copy finished before the next call. Plain cudaMemcpy would not do: for
  // device-to-device it returns before the copy is done, on the legacy default stream, which our
  // non-blocking stream does not wait for — the kernel would read the inputs half-copied (the first
  // H200 run flagged the honest ReLU as result reuse exactly so).
  bool copy_on_stream(void* dst, const void* src, std::size_t n) {
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream_) == cudaSuccess &&
           cudaStreamSynchronize(stream_) == cudaSuccess;
  }

  // Up to 1M elements spread evenly over a device buffer, copied to the host in one strided copy.
  static bool sample(const void* device, const TensorRef& ref, std::vector<unsigned char>& out) {
    const std::size_t esize = dtype_size(ref.dtype);
    const std::size_t count = ref.nbytes / esize;
    if (count == 0) return true;
    const std::size_t stride = std::max<std::size_t>(1, count / (1u << 20));
    const std::size_t rows = count / stride;
    out.resize(rows * esize);
    return cudaMemcpy2D(out.data(), esize, device, stride * esize, esize, rows, cudaMemcpyDeviceToHost) == cudaSuccess;
  }

  struct Prepared {
    std::vector<cutegen_tensor> inputs;
    std::vector<std::vector<cutegen_tensor>> outputs;
    std::vector<std::vector<TensorRef>> output_refs;
  };

  RunnerJob job_;
  std::string result_path_;
  nlohmann::json result_;
  cudaStream_t stream_ = nullptr;
  Forward forward_ = nullptr;
  std::map<std::array<unsigned char, 64>, void*> opened_;
  std::vector<Prepared> trials_;
  std::vector<Prepared> timing_sets_;
};

}  // namespace
}  // namespace cutegen

int main(int argc, char** argv) {
  std::string job_path, result_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--job") job_path = argv[i + 1];
    if (a == "--result") result_path = argv[i + 1];
  }
  if (job_path.empty() || result_path.empty()) {
    std::fprintf(stderr, "usage: cutegen-runner --job JOB.json --result RESULT.json (started by cutegen eval)\n");
    return 2;
  }
  auto text = cutegen::read_file(job_path);
  nlohmann::json result = {{"phase", "setup"}};
  if (!text) {
    result["failure"] = "setup";
    result["message"] = text.error().message;
    (void)cutegen::write_file_atomic(result_path, result.dump());
    return 2;
  }
  auto j = nlohmann::json::parse(*text, nullptr, false);
  auto job = j.is_discarded() ? cutegen::Result<cutegen::RunnerJob>(cutegen::Error{"job file is not JSON"})
                              : cutegen::parse_runner_job(j);
  if (!job) {
    result["failure"] = "setup";
    result["message"] = job.error().message;
    (void)cutegen::write_file_atomic(result_path, result.dump());
    return 2;
  }
  // The candidate's stdout goes to a private file the runner inspects after each call.
  std::fflush(stdout);
  if (FILE* capture = std::tmpfile(); capture) dup2(fileno(capture), STDOUT_FILENO);
  cutegen::Runner runner(std::move(*job), result_path);
  return runner.run();
}
