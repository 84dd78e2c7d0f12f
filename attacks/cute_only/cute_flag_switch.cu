// Attack (the CuTe check reads other code than the build): the host compiler preprocesses the device
// code, and a flag given to only one of the two compiles changes its predefined macros. The build had
// -Xcompiler -fPIC and the CuTe analysis compile did not, so __PIE__ was defined only in the analysis:
// it saw (and approved) a CuTe kernel while the library got a raw one of the same name. Verified with
// nvcc 13.0 before the fix: the analysis PTX stored 1 where the built kernel stored 2 for one such #ifdef.
// Expected: rejected. Both compiles now share every flag that can reach the preprocessor, so this file
// is a raw kernel in both ("no-cute"); and a difference that remains would be an "analysis-mismatch",
// because the build proves that both compiles read the same device translation unit.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {
#if defined(__PIE__)
// What the analysis compile used to see.
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  using namespace cute;
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = gX(i);
    gY(i) = v < 0.f ? 0.f : v;
  }
}
#else
// What the build compiled.
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[i] < 0.f ? 0.f : x[i];
}
#endif
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != CUTEGEN_FLOAT32 || out[0].dtype != CUTEGEN_FLOAT32 ||
      cutegen::numel(in[0]) != cutegen::numel(out[0]))
    return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  attack::relu<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)), 256, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
