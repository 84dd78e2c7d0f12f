// Attack (forged line tables, hidden from the source rules): cute_line_directive.cu's #line, preceded
// by a form feed. GCC, which preprocesses the .cu for nvcc, takes a form feed (also a vertical tab or a
// NUL) as a blank before '#', and a lone carriage return as a line end; the rules' scanner took only
// spaces and tabs, so this #line reached nvcc and renamed the raw kernel's code to CuTe's header.
// Expected: rejected before nvcc runs (the scanner now reads blanks and line ends as GCC does).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

#line 1 "/work/main/third_party/cutlass/include/cute/tensor.hpp"
namespace attack {
__global__ void relu_raw(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[i] < 0.f ? 0.f : x[i];
}
}  // namespace attack

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
