// Attack (forged line tables): a GNU linemarker tells the compiler that the raw kernel below comes from
// CuTe's tensor.hpp, so the device line tables attribute its code to CuTe's headers. (The path is the
// CUTLASS location of the H200 checkout the compile errors show; any path gets the file refused.)
// Expected: rejected before nvcc runs (GNU linemarkers are refused, like #line).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

# 1 "/work/main/third_party/cutlass/include/cute/tensor.hpp"
namespace attack {
__global__ void relu_raw(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[i] < 0.f ? 0.f : x[i];
}
}  // namespace attack
# 20 "candidate.cu"

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (n_in != 1 || n_out != 1 || in[0].dtype != CUTEGEN_FLOAT32 || out[0].dtype != CUTEGEN_FLOAT32 ||
      cutegen::numel(in[0]) != cutegen::numel(out[0]))
    return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  attack::relu_raw<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)), 256, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  return static_cast<int>(cudaGetLastError());
}
