// Attack (content cache on the device): keeps the last 8 answers in a static __device__ buffer (memory
// the harness did not hand out, which the static checks allow: it is what an honest workspace uses
// too), keyed by a hash of the first 4096 input values. A lookup kernel hashes the input and decides on
// the device; a hit copies the remembered answer, a miss computes it, remembers it and pays a 2 ms
// spin (the stand-in for expensive work). With a judge that rotates a few fixed timing sets every
// timed call hits. Expected: pass with a time of at least 2 ms — inputs are fresh on every call, so a
// content cache never hits outside the two calls of a correctness trial, where its answer is right.
// Problem: attacks/problems/relu_small.py (the remembered answers must fit in a static buffer).
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
// --- deliberate cost (attacks that must merely gain nothing): one thread waits a known time on the
// GPU's global nanosecond timer, so the kernel cannot finish sooner; a forged or cached time is then
// unmistakable against the manifest's min_ms ---
namespace attack {
__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void spin_ns(uint64_t ns) {
  const uint64_t start = globaltimer_ns();
  while (globaltimer_ns() - start < ns) {
  }
}
constexpr uint64_t kSpinNs = 2000000;  // 2 ms
}  // namespace attack
// --- end of deliberate cost ---

namespace attack {
constexpr int64_t kMaxElems = 1 << 20;  // relu_small: 1024 x 1024
constexpr int kSlots = 8;
constexpr int kKeyElems = 4096;
constexpr int kThreads = 256;

__device__ float g_answers[kSlots][kMaxElems];  // 32 MiB
__device__ unsigned long long g_keys[kSlots];
// g_state(0): slot of this call's hit or -1; g_state(1): next slot to fill; g_state(2): this call's key.
__device__ long long g_state[3];

__device__ __forceinline__ unsigned long long mix(unsigned long long z) {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One block: an order-independent hash (a sum of mixed (index, bits) pairs), then the table lookup.
__global__ void lookup(const float* x, int64_t n) {
  __shared__ unsigned long long partial[kThreads];
  auto gx = flat(x, n);
  unsigned long long h = 0;
  for (int64_t i = threadIdx.x; i < n && i < kKeyElems; i += kThreads)
    h += mix((static_cast<unsigned long long>(i) << 32) ^ __float_as_uint(ld(gx, i)));
  partial[threadIdx.x] = h;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int t = 1; t < kThreads; ++t) h += partial[t];
  h = mix(h ^ static_cast<unsigned long long>(n));
  auto state = flat(g_state, 3);
  auto keys = flat(g_keys, kSlots);
  long long hit = -1;
  for (int k = 0; k < kSlots; ++k)
    if (keys(k) == h) hit = k;
  state(0) = hit;
  state(2) = static_cast<long long>(h);
}

__global__ void relu_memo(const float* x, float* y, int64_t n) {
  auto state = flat(g_state, 3);
  const long long hit = state(0);
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  if (hit >= 0) {
    auto memo = flat(&g_answers[hit][0], n);
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
      st(gy, i, ld(memo, i));
    return;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) spin_ns(kSpinNs);
  auto memo = flat(&g_answers[state(1)][0], n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v = ld(gx, i) < 0.f ? 0.f : ld(gx, i);
    st(gy, i, v);
    st(memo, i, v);
  }
}

// After the answer is stored: a miss publishes its key and advances the ring.
__global__ void commit() {
  auto state = flat(g_state, 3);
  auto keys = flat(g_keys, kSlots);
  if (state(0) >= 0) return;
  keys(state(1)) = static_cast<unsigned long long>(state(2));
  state(1) = (state(1) + 1) % kSlots;
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  if (n > attack::kMaxElems) return CUTEGEN_ERROR_UNSUPPORTED;
  const float* x = static_cast<const float*>(in[0].data);
  attack::lookup<<<1, attack::kThreads, 0, s>>>(x, n);
  attack::relu_memo<<<attack::blocks_for(n), 256, 0, s>>>(x, static_cast<float*>(out[0].data), n);
  attack::commit<<<1, 1, 0, s>>>();
  return static_cast<int>(cudaGetLastError());
}
