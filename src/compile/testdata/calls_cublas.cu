// Attack: does the work with cuBLAS instead of CuTe (declared by hand, so no cuBLAS header is needed).
#include <cutegen/kernel.h>
#include <cute/tensor.hpp>

extern "C" int cublasCreate_v2(void** handle);
extern "C" int cublasSgemm_v2(void* handle, int ta, int tb, int m, int n, int k, const float* alpha, const float* A,
                              int lda, const float* B, int ldb, const float* beta, float* C, int ldc);

__global__ void touch(float* p) {
  auto t = cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(cute::Int<1>{}));
  t(0) = t(0);
}

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  static void* handle = nullptr;
  if (!handle) cublasCreate_v2(&handle);
  float one = 1.f, zero = 0.f;
  int n = static_cast<int>(in[0].shape[0]);
  touch<<<1, 1, 0, s>>>(static_cast<float*>(out[0].data));
  return cublasSgemm_v2(handle, 0, 0, n, n, n, &one, static_cast<const float*>(in[1].data), n,
                        static_cast<const float*>(in[0].data), n, &zero, static_cast<float*>(out[0].data), n);
}
