// Attack (state across calls in the workspace, contract v2): asks for a workspace as large as the
// output, computes ReLU on its first call and keeps the answer there, and on every later call only
// re-applies fmaxf(kept, 0) to what it kept -- "the answer is already in the workspace". A judge that
// handed the same workspace back untouched would see the second run of the first trial pass (same
// inputs) and catch the reuse only on the next trial, as `result_reuse`. The harness fills the
// workspace with a fresh NaN pattern before every call, so the second call already reads NaN, and
// fmaxf(NaN, 0) is 0: a finite wrong answer. Expected: mismatch (trial 0's second run, output set 1).
// Problem: attacks/problems/relu_small.py.
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

__global__ void relu_and_keep(const float* x, float* y, float* kept, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  auto gk = flat(kept, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v = fmaxf(ld(gx, i), 0.f);
    st(gy, i, v);
    st(gk, i, v);
  }
}

__global__ void from_kept(const float* kept, float* y, int64_t n) {
  auto gk = flat(kept, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, fmaxf(ld(gk, i), 0.f));
}

int g_calls = 0;  // host state: how many calls this process has served

}  // namespace attack

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out,
                                          int32_t n_out) {
  if (!attack::relu_args(in, n_in, out, n_out)) return 0;
  return static_cast<size_t>(cutegen::numel(out[0])) * sizeof(float);
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                                  void* workspace, size_t workspace_bytes, cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  if (workspace_bytes < static_cast<size_t>(n) * sizeof(float)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  float* kept = static_cast<float*>(workspace);
  float* y = static_cast<float*>(out[0].data);
  if (attack::g_calls++ == 0)
    attack::relu_and_keep<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data), y, kept, n);
  else
    attack::from_kept<<<attack::blocks_for(n), 256, 0, s>>>(kept, y, n);
  return static_cast<int>(cudaGetLastError());
}
