// Attack (the host does the work, beside a token CuTe kernel): every call copies the input to the host
// (cudaMemcpyAsync into pageable memory, which returns only once the copy is done — the synchronous
// cudaMemcpy is not importable), computes the ReLU on the CPU, copies the answer back on the given stream,
// and launches a CuTe kernel that only rewrites one element. Every value is right, the time is honest
// (the supervisor's clock counts the host work), the CUDA events on the stream span it all, and the
// library passes every static check: a CuTe kernel is launched. But no GPU kernel computed the answer.
// Expected: host_compute — the runner's CPU time inside each timed call, read by the worker from the
// kernel's accounting, is the whole call (copies and loop), far above what launching takes.
// Problem: attacks/problems/relu_small.py (4 MB each way: a few milliseconds of host time per call).
// --- ReLU attack scaffolding (each candidate must be a single file) ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {

inline bool relu_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  return n_in == 1 && n_out == 1 && in[0].dtype == CUTEGEN_FLOAT32 && out[0].dtype == CUTEGEN_FLOAT32 &&
         cutegen::numel(in[0]) == cutegen::numel(out[0]);
}

template <class T>
__device__ auto flat(T* p, int64_t n) {
  return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(n));
}

// Element access through a one-element register fragment and cute::copy: the generated code is then
// CuTe's own, as in an honest kernel that copies whole tiles this way (the static check looks for it).
template <class Tensor>
__device__ float ld(const Tensor& t, int64_t i) {
  float r[1];
  cute::copy(cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}),
             cute::make_tensor(&r[0], cute::Layout<cute::_1>{}));
  return r[0];
}
template <class Tensor>
__device__ void st(const Tensor& t, int64_t i, float v) {
  float r[1] = {v};
  cute::copy(cute::make_tensor(&r[0], cute::Layout<cute::_1>{}),
             cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}));
}

inline unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)); }

}  // namespace attack
// --- end of scaffolding ---

namespace attack {
// The token GPU work: one element read and written back through CuTe, after the host's answer is on the
// device (same stream), so the output stays right. Launched with one thread and indexed by threadIdx.x:
// a constant coordinate would fold the CuTe code away (attacks/README.md).
__global__ void touch_first(float* y) {
  auto gy = flat(y, 1);
  st(gy, threadIdx.x, ld(gy, threadIdx.x) + 0.0f);  // + 0: not an identity (-0), so the store stays in -O3
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(in[0]);
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  static float* host = nullptr;  // zero-initialised: no code at load time
  static size_t host_bytes = 0;
  if (host_bytes < bytes) {
    free(host);
    host = static_cast<float*>(malloc(bytes));
    host_bytes = host ? bytes : 0;
    if (!host) return CUTEGEN_ERROR_UNSUPPORTED;
  }
  // Device to pageable host memory: returns once the copy has completed.
  if (cudaError_t e = cudaMemcpyAsync(host, in[0].data, bytes, cudaMemcpyDeviceToHost, s); e != cudaSuccess)
    return static_cast<int>(e);
  for (int64_t i = 0; i < n; ++i) host[i] = host[i] < 0.f ? 0.f : host[i];
  // From pageable memory: staged before it returns, so the buffer may be reused at the next call.
  if (cudaError_t e = cudaMemcpyAsync(out[0].data, host, bytes, cudaMemcpyHostToDevice, s); e != cudaSuccess)
    return static_cast<int>(e);
  attack::touch_first<<<1, 1, 0, s>>>(static_cast<float*>(out[0].data));
  return static_cast<int>(cudaGetLastError());
}
