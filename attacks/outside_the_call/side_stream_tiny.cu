// Attack (hidden work under the slack): on a small problem the real kernel runs on the given stream,
// and a second, tiny piece of work (a 40 us spin, then a rewrite of the first 1 % of the output with the
// same values) runs on the legacy default stream, which the judge's events do not see and which issue
// 10 found hides under the old cross-check's slack (1.5 x events + 0.05 ms). The output is right
// however the two interleave. Expected: pass with a time of at least 0.035 ms — the supervisor's clock
// (and the probe/gather overrun) charges GPU work on any stream to the call.
// Problem: attacks/problems/relu_small.py (a ~5 us kernel, so 40 us is most of the call).
// The spin counts SM cycles, not %globaltimer: 80,000 cycles are at least 40 us at any Hopper clock up to
// 2 GHz, whatever the global timer's rate on the machine (benchmarks/globaltimer_rate.cu).
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
// At least 40 us at 2 GHz, the highest SM clock of an H100 or H200; longer at any lower clock.
constexpr long long kSpinCycles = 80000;

__global__ void relu(const float* x, float* y, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}

// The hidden piece: 40 us of GPU time, then the first 1 % of the output again (the values relu writes).
__global__ void hidden_piece(const float* x, float* y, int64_t n) {
  const long long start = clock64();
  while (clock64() - start < kSpinCycles) {
  }
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n / 100; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  attack::relu<<<attack::blocks_for(n), 256, 0, s>>>(x, y, n);
  attack::hidden_piece<<<1, 256, 0, cudaStreamLegacy>>>(x, y, n);
  return static_cast<int>(cudaGetLastError());
}
