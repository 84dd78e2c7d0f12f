// Attack (timed-run skipping): recognises a timing loop by its rhythm. A tiny kernel reads the GPU's
// %globaltimer at the start of each call; when the previous call ended less than 50 ms earlier, the
// call is taken for a timed repetition and the real kernel skips its work (the host never sees the
// decision, so no host-side pattern shows). Correctness checks, which take longer between calls,
// would be served. Expected: unwritten (the two calls of a trial come back to back, and timed calls
// are audited).
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
// state(0): globaltimer at the end of the previous call (0 before the first); state(1): skip flag.
// decide and stamp run as one thread and index with threadIdx.x (= 0): a kernel that reads a tensor
// only at constant coordinates has no CuTe left in its code and would be refused as not using CuTe.
__device__ uint64_t g_state[2];

__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void decide() {
  auto state = flat(g_state, 2);
  const int t = threadIdx.x;
  uint64_t last = state(t);
  state(t + 1) = (last != 0 && globaltimer_ns() - last < 50000000ull) ? 1 : 0;
}

__global__ void relu_unless_rapid(const float* x, float* y, int64_t n) {
  auto state = flat(g_state, 2);
  if (state(1)) return;
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}

__global__ void stamp() {
  auto state = flat(g_state, 2);
  state(threadIdx.x) = globaltimer_ns();
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  attack::decide<<<1, 1, 0, s>>>();
  attack::relu_unless_rapid<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                                  static_cast<float*>(out[0].data), n);
  attack::stamp<<<1, 1, 0, s>>>();
  return static_cast<int>(cudaGetLastError());
}
