// Attack (raw CUDA dressed as CuTe): the work is a plain raw-pointer CUDA kernel; beside it sits a CuTe
// kernel that is never launched, only there so that CuTe code appears somewhere in the binary (a
// check that searches the whole library's line tables is satisfied by it).
// Expected: rejected — every kernel must itself contain CuTe code; the raw kernel is named.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {
__global__ void relu_raw(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[i] < 0.f ? 0.f : x[i];
}

// Never launched.
__global__ void relu_cute_decoy(const float* x, float* y, int64_t n) {
  auto gx = cute::make_tensor(cute::make_gmem_ptr(x), cute::make_layout(n));
  auto gy = cute::make_tensor(cute::make_gmem_ptr(y), cute::make_layout(n));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    gy(i) = gx(i) < 0.f ? 0.f : gx(i);
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
