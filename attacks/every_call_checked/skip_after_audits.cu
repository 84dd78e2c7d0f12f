// Attack (timed calls not compared, audits counted by their gaps): under a judge that compares only a
// fraction of the timed calls with the reference, and does that work on the GPU right after the calls it
// audits, the gap before the next call is longer on the GPU's own clock. A tiny kernel reads %globaltimer
// at the start of each call and at the end of the last one; a gap more than 1.5x the shortest seen before a
// call of the same input kind (signed inputs, which take longer to stage, are told by a negative value
// among the first 1024) counts as an audit. A judge that audits a quarter of the timed calls (at least 4)
// makes 5 audits in the suite's 20 timed calls: once 5 are seen none are left, and the kernel writes zeros
// instead of working -- as it does when 12 timed calls have shown fewer, taking the judge for one that
// compares nothing it can see. The first 16 calls (three trials of two runs, ten warm-ups) are honest.
// Expected: mismatch (every timed call is compared at fresh secret positions, and the worker does the same
// work after every call, so whichever way it decides, the call it cheats on is compared).
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
// g_state: 0 the end of the last call (globaltimer), 1 calls so far, 2 and 3 the shortest gap before a
// problem / signed call, 4 audits seen, 5 the decision for this call (1: write zeros). One thread decides
// and indexes with threadIdx.x (= 0): a kernel that reads a tensor only at constant coordinates has no CuTe
// left in its code and would be refused as not using CuTe.
__device__ uint64_t g_state[6];

constexpr uint64_t kUntimed = 16;    // 3 trials x 2 runs + 10 warm-ups
constexpr uint64_t kAudits = 5;      // max(4, 20 / 4)
constexpr uint64_t kPatience = 12;   // timed calls without seeing them all

__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void decide(const float* x, int64_t n) {
  uint64_t now = globaltimer_ns();
  auto state = flat(g_state, 6);
  auto gx = flat(x, n);
  const int t = threadIdx.x;
  bool signed_inputs = false;
  for (int64_t i = t; i < 1024 && i < n; ++i) signed_inputs |= ld(gx, i) < 0.f;
  uint64_t calls = state(t + 1), last = state(t), cheat = 0;
  if (calls >= 7 && last != 0) {  // gaps between trials hold full checks; from the warm-ups on they are staging
    uint64_t gap = now - last;
    uint64_t shortest = state(t + 2 + signed_inputs);
    if (shortest == 0 || gap < shortest) state(t + 2 + signed_inputs) = shortest = gap;
    if (calls > kUntimed && 2 * gap > 3 * shortest) state(t + 4) = state(t + 4) + 1;
    uint64_t timed = calls >= kUntimed ? calls - kUntimed : 0;
    cheat = calls >= kUntimed && (state(t + 4) >= kAudits || timed >= kPatience);
  }
  state(t + 5) = cheat;
  state(t + 1) = calls + 1;
}

__global__ void relu_or_zeros(const float* x, float* y, int64_t n) {
  auto state = flat(g_state, 6);
  bool cheat = state(5) != 0;
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, cheat ? 0.f : (ld(gx, i) < 0.f ? 0.f : ld(gx, i)));
}

__global__ void stamp() {
  auto state = flat(g_state, 6);
  state(threadIdx.x) = globaltimer_ns();
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  attack::decide<<<1, 1, 0, s>>>(x, n);
  attack::relu_or_zeros<<<attack::blocks_for(n), 256, 0, s>>>(x, static_cast<float*>(out[0].data), n);
  attack::stamp<<<1, 1, 0, s>>>();
  return static_cast<int>(cudaGetLastError());
}
