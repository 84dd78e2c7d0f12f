// Attack: allocates a private device buffer (to cache results between calls); the harness owns all memory.
#include <cutegen/kernel.h>
#include <cute/tensor.hpp>

__global__ void copy1(const float* x, float* y) {
  auto gx = cute::make_tensor(cute::make_gmem_ptr(x), cute::make_layout(cute::Int<1>{}));
  auto gy = cute::make_tensor(cute::make_gmem_ptr(y), cute::make_layout(cute::Int<1>{}));
  gy(0) = gx(0);
}

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  static float* cache = nullptr;
  if (!cache) cudaMalloc(&cache, 4);
  copy1<<<1, 1, 0, s>>>(static_cast<const float*>(in[0].data), cache);
  copy1<<<1, 1, 0, s>>>(cache, static_cast<float*>(out[0].data));
  return 0;
}
