// Rejected: the launched kernel is raw CUDA; a CuTe kernel that is never launched sits beside it to put
// CuTe into the binary. Expected: no-cute naming relu_raw (and only it).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace decoy {

__global__ void relu_cute(const float* x, float* y, int64_t n) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) gY(i) = gX(i) < 0.f ? 0.f : gX(i);
}

__global__ void relu_raw(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i] < 0.f ? 0.f : x[i];
}

}  // namespace decoy

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  int64_t n = cutegen::numel(in[0]);
  decoy::relu_raw<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(static_cast<const float*>(in[0].data),
                                                                         static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
