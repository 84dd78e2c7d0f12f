// Rejected: CuTe tensors are built, but the kernel indexes the raw pointers taken out of them
// (t.data()[i]), so no CuTe layout ever maps a coordinate. Expected: no-cute naming relu_raw.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace pointer_example {

__global__ void relu_raw(const float* x, float* y, int64_t n) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < size(gX); i += int64_t(gridDim.x) * blockDim.x)
    gY.data()[i] = gX.data()[i] < 0.f ? 0.f : gX.data()[i];
}

}  // namespace pointer_example

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  int64_t n = cutegen::numel(in[0]);
  pointer_example::relu_raw<<<256, 256, 0, s>>>(static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
