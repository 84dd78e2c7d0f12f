// Attack: loads a library at run time to reach code the static checks cannot see.
#include <dlfcn.h>
#include <cutegen/kernel.h>
#include <cute/tensor.hpp>

__global__ void touch(float* p) {
  auto t = cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(cute::Int<1>{}));
  t(0) = t(0);
}

extern "C" int cutegen_forward(const cutegen_tensor*, int32_t, const cutegen_tensor* out, int32_t, cudaStream_t s) {
  void* lib = dlopen("libcublas.so", RTLD_NOW);
  void* fn = lib ? dlsym(lib, "cublasSgemm_v2") : nullptr;
  (void)fn;
  touch<<<1, 1, 0, s>>>(static_cast<float*>(out[0].data));
  return 0;
}
