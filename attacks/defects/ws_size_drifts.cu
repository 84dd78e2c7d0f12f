// Attack (a workspace whose size is not a function of the shapes): cutegen_workspace_bytes adds to the
// output's size a few kilobytes chosen by where the loader put this library -- address-space
// randomisation gives every process another load address, so every runner that loads it hears another
// size. A judge that sized the workspace in one runner and trusted that number in the next (the worker
// starts a second runner with the workspace mapped; a screening group's size is reused by the chosen
// candidate's full evaluation, `workspace_bytes`) would map one size and run a kernel that planned for
// another. The kernel itself is an honest ReLU through the workspace. Expected: load_failed, the second
// load's size differing from the first. Two loads collide with probability 1 / 65521 (the size's free
// part: 64 bytes times the load address's page number mod 65521, at most ~4 MB, under the workspace cap).
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

__global__ void relu_through(const float* x, float* y, float* staged, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  auto gs = flat(staged, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    st(gs, i, fmaxf(ld(gx, i), 0.f));
    st(gy, i, ld(gs, i));
  }
}

const int g_anchor = 0;  // its address moves with the library's load address

size_t drift_bytes() { return 64 * (1 + (reinterpret_cast<uintptr_t>(&g_anchor) >> 12) % 65521); }

}  // namespace attack

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out,
                                          int32_t n_out) {
  if (!attack::relu_args(in, n_in, out, n_out)) return 0;
  return static_cast<size_t>(cutegen::numel(out[0])) * sizeof(float) + attack::drift_bytes();
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                                  void* workspace, size_t workspace_bytes, cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(in[0]);
  if (workspace_bytes < static_cast<size_t>(n) * sizeof(float)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  attack::relu_through<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                              static_cast<float*>(out[0].data),
                                                              static_cast<float*>(workspace), n);
  return static_cast<int>(cudaGetLastError());
}
