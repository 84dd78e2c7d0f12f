// Attack: a #line directive could make raw-pointer code appear to come from CuTe's headers.
#include <cutegen/kernel.h>
#include <cute/tensor.hpp>
#line 1 "/fake/include/cute/tensor.hpp"
__global__ void relu(const float* x, float* y, long n) {
  long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i] < 0.f ? 0.f : x[i];
}

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  relu<<<1, 256, 0, s>>>(static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), 1);
  return 0;
}
