// Attack (an unwritten bool output): y = x > 0.05 on attacks/problems/bool_threshold.py stores only the
// False elements and leaves the rest as the harness left them. A judge that poisons a bool output with
// 0xFF (or any non-zero byte) reads every unwritten element as True, which is the answer for 95% of the
// problem's own inputs: the kernel passes and skips most of its stores. Expected: unwritten (a bool output
// is poisoned with a byte that is neither 0 nor 1 and read as its bytes, so the elements left are the
// poison, in both runs of the first trial).
// --- bool threshold scaffolding (each candidate must be a single file) ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {

// y = x > 0.05: x fp32, y bool (one byte, 0 or 1), the same element count, dense.
inline bool threshold_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  return n_in == 1 && n_out == 1 && in[0].dtype == CUTEGEN_FLOAT32 && out[0].dtype == CUTEGEN_BOOL &&
         cutegen::numel(in[0]) == cutegen::numel(out[0]) && cutegen::is_contiguous(in[0]) &&
         cutegen::is_contiguous(out[0]);
}

template <class T>
__device__ auto flat(T* p, int64_t n) {
  return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(n));
}

// Element access through a one-element register fragment and cute::copy (the static CuTe check looks for
// CuTe's own code, as an honest kernel that copies whole tiles this way has).
template <class T, class Tensor>
__device__ T ld(const Tensor& t, int64_t i) {
  T r[1];
  cute::copy(cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}),
             cute::make_tensor(&r[0], cute::Layout<cute::_1>{}));
  return r[0];
}
template <class T, class Tensor>
__device__ void st(const Tensor& t, int64_t i, T v) {
  T r[1] = {v};
  cute::copy(cute::make_tensor(&r[0], cute::Layout<cute::_1>{}),
             cute::make_tensor(cute::make_gmem_ptr(&t(i)), cute::Layout<cute::_1>{}));
}

inline unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)); }

}  // namespace attack
// --- end of scaffolding ---

namespace attack {
__global__ void store_false_only(const float* x, bool* y, int64_t n) {
  auto gx = flat(x, n);
  auto gy = flat(y, n);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (!(ld<float>(gx, i) > 0.05f)) st(gy, i, false);
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::threshold_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  attack::store_false_only<<<attack::blocks_for(n), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                                 static_cast<bool*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
