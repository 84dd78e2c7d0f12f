// Attack: remembers every answer it has given, by input pointer, in a static __device__ buffer (no
// allocation call, so the static checks let it through), and replays it whenever the same input
// buffer comes back. Every check on fixed inputs passes: the trials' second runs and all timed runs
// reuse answers that were right. Expected: result_reuse (the runner copies another call's inputs
// into the same buffers; the replayed answer no longer matches).
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
constexpr int64_t kMaxElems = 1 << 20;  // attacks/problems/relu_small.py: 1024 x 1024
constexpr int kSlots = 16;
__device__ float cache[kSlots][kMaxElems];

__global__ void relu_and_remember(const float* x, float* y, float* slot, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  auto gs = flat(slot, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v = ld(gx, i) < 0.f ? 0.f : ld(gx, i);
    st(gy, i, v);
    st(gs, i, v);
  }
}

__global__ void replay(const float* slot, float* y, int64_t n) {
  auto gs = flat(slot, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gs, i));
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  if (n > attack::kMaxElems) return CUTEGEN_ERROR_UNSUPPORTED;
  static const void* keys[attack::kSlots];
  static int used = 0;
  float* base = nullptr;
  if (cudaGetSymbolAddress(reinterpret_cast<void**>(&base), attack::cache) != cudaSuccess) return CUTEGEN_ERROR_UNSUPPORTED;
  for (int k = 0; k < used; ++k)
    if (keys[k] == in[0].data) {
      attack::replay<<<attack::blocks_for(n), 256, 0, s>>>(base + k * attack::kMaxElems, static_cast<float*>(out[0].data), n);
      return static_cast<int>(cudaGetLastError());
    }
  int k = used < attack::kSlots ? used++ : attack::kSlots - 1;
  keys[k] = in[0].data;
  attack::relu_and_remember<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                                  static_cast<float*>(out[0].data),
                                                                  base + k * attack::kMaxElems, n);
  return static_cast<int>(cudaGetLastError());
}
