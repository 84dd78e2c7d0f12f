// Honest control (a persistent kernel with a work counter reset every call): ReLU on
// attacks/problems/relu_small.py by a fixed grid of CTAs that take 4096-element tiles from a __device__
// counter until none are left. The counter is state that outlives a call, so a one-thread kernel sets it
// to zero at the start of every call, on the given stream. A judge that treats state kept across calls as
// a cache, or whose checks depend on which calls are compared, must still pass it. Expected: pass.
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
constexpr int64_t kTile = 4096;
constexpr unsigned kCtas = 264;  // two per SM of an H200: the grid stays resident and loops over the tiles
__device__ unsigned long long g_next[1];  // the next tile to take

__global__ void reset_counter() {
  auto next = flat(g_next, 1);
  next(threadIdx.x) = 0;
}

__global__ void relu_persistent(const float* x, float* y, int64_t n) {
  auto next = flat(g_next, 1);
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  __shared__ long long tile;
  const long long tiles = (n + kTile - 1) / kTile;
  for (;;) {
    if (threadIdx.x == 0) tile = static_cast<long long>(atomicAdd(&next(threadIdx.x), 1ull));
    __syncthreads();
    const long long t = tile;
    __syncthreads();  // every thread has read it before thread 0 takes the next
    if (t >= tiles) break;
    const int64_t end = std::min<int64_t>(n, (t + 1) * kTile);
    for (int64_t i = t * kTile + threadIdx.x; i < end; i += blockDim.x) st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
  }
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  attack::reset_counter<<<1, 1, 0, s>>>();
  attack::relu_persistent<<<attack::kCtas, 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                        static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
