// Attack (foreseeing the timed inputs): learns each call's seed from its inputs (here the problem shows
// it, standing in for a brute-force search over Philox seeds) and, once two consecutive calls' seeds
// differ by the step a judge that derives seed_k = a*T + b*k from one seed T uses (b = 104729, mod
// 2^31: cutegen until the fourth session of 2026-12-01), computes the inputs and answers of the next 128 calls during that
// untimed warm-up call. Each later call whose seed was foreseen copies its stored answer instead of
// paying the 2 ms spin that stands in for the real work; the values are right, so every audit passes.
// Against that judge: pass in a few microseconds. Expected: pass with at least 1.9 ms — the timed
// seeds are drawn from the OS one call at a time, nothing foreseen ever matches, every call pays.
// Problem: attacks/problems/seed_shown.py (x*x, sign-blind, so the judge's random signs need no foresight).
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
constexpr int64_t kElems = 1 << 16;  // seed_shown: N
constexpr int kAhead = 128;          // warm-up plus timed calls foreseen at once
constexpr long long kStep = 104729;  // the old judge: seed_{k+1} - seed_k, mod 2^31
constexpr long long kMask = 0x7FFFFFFF;

__device__ float g_answers[kAhead][kElems];  // 32 MiB
__device__ long long g_foreseen[kAhead];     // the seeds of the stored answers
// g_state(0): slot of this call's stored answer or -1; g_state(1): 1 when this call foresees the next ones;
// g_state(2): the previous call's seed.
__device__ long long g_state[3] = {-1, 0, -1};

inline bool seed_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  return n_in == 2 && n_out == 1 && in[0].dtype == CUTEGEN_FLOAT32 && in[1].dtype == CUTEGEN_INT64 &&
         cutegen::numel(in[1]) == 1 && out[0].dtype == CUTEGEN_FLOAT32 && cutegen::numel(in[0]) == cutegen::numel(out[0]);
}

// The problem's x for a seed, exactly as get_inputs() computes it (int64 hash, fp32 rounding, / 2^32).
__device__ __forceinline__ float input_for(long long seed, int64_t i) {
  const unsigned long long h = static_cast<unsigned long long>(i) * 2654435761ull + (static_cast<unsigned long long>(seed) & 0xFFFFFFFFull);
  return static_cast<float>(static_cast<unsigned int>(h & 0xFFFFFFFFull)) * 0x1p-32f;
}

// One thread: is this call's seed foreseen, and does it continue the old judge's sequence?
__global__ void foresee(const long long* seed_in) {
  auto seed = flat(seed_in, 1);
  auto state = flat(g_state, 3);
  auto foreseen = flat(g_foreseen, kAhead);
  if (threadIdx.x != 0) return;
  const long long s = seed(threadIdx.x);
  long long hit = -1;
  for (int k = 0; k < kAhead; ++k)
    if (foreseen(k) == s) hit = k;
  const bool next_ones = hit < 0 && state(2) >= 0 && ((s - state(2)) & kMask) == kStep;
  state(0) = hit;
  state(1) = next_ones ? 1 : 0;
  state(2) = s;
  if (next_ones)
    for (int k = 0; k < kAhead; ++k) foreseen(k) = (s + kStep * (k + 1)) & kMask;
}

__global__ void square(const float* x, float* y, int64_t n) {
  auto state = flat(g_state, 3);
  auto foreseen = flat(g_foreseen, kAhead);
  const long long hit = state(0);
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  if (hit >= 0) {
    auto stored = flat(&g_answers[hit][0], n);
    for (int64_t i = first; i < n; i += stride) st(gy, i, ld(stored, i));
    return;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) spin_ns(kSpinNs);
  for (int64_t i = first; i < n; i += stride) st(gy, i, ld(gx, i) * ld(gx, i));
  if (state(1) == 0) return;
  for (int k = 0; k < kAhead; ++k) {
    auto stored = flat(&g_answers[k][0], n);
    for (int64_t i = first; i < n; i += stride) {
      const float v = input_for(foreseen(k), i);
      st(stored, i, v * v);
    }
  }
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::seed_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(in[0]);
  if (n > attack::kElems) return CUTEGEN_ERROR_UNSUPPORTED;
  attack::foresee<<<1, 32, 0, s>>>(static_cast<const long long*>(in[1].data));
  attack::square<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                      static_cast<float*>(out[0].data), n);
  return 0;
}
