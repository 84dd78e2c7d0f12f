// Attack (work left running after the reply, 8 hidden work): the first half of the output on the given
// stream, the second half on the legacy default stream, which the given stream's events do not see, so
// the call returns while half the work may still be running. Whether the worker's probe after the call
// waits for it, or the gather behind it does, or the gather reads the poison of the half not yet
// written, the second half must be paid for. Expected: unwritten, or a time of at least 0.45 ms (the
// whole ReLU runs about 0.56 ms by events on an H200; half of it is 0.28), as pass or hidden_work.
// Problem: problems/relu.py (268M fp32).
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
__global__ void relu_part(const float* x, float* y, int64_t begin, int64_t end) {
  auto gx = flat(x, end);
  auto gy = flat(y, end);
  for (int64_t i = begin + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < end; i += int64_t(gridDim.x) * blockDim.x)
    st(gy, i, ld(gx, i) < 0.f ? 0.f : ld(gx, i));
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::relu_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  attack::relu_part<<<attack::blocks_for(n / 2), 256, 0, s>>>(x, y, 0, n / 2);
  attack::relu_part<<<attack::blocks_for(n - n / 2), 256, 0, cudaStreamLegacy>>>(x, y, n / 2, n);
  return static_cast<int>(cudaGetLastError());
}
