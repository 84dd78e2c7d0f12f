// Attack: writes 1/N everywhere for a row softmax — the right answer only for constant rows.
// Expected: mismatch.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {
__global__ void fill(float* y, int64_t total, float v) {
  auto gy = cute::make_tensor(cute::make_gmem_ptr(y), cute::make_layout(total));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    gy(i) = v;
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (n_in != 1 || n_out != 1 || in[0].rank < 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = in[0].shape[in[0].rank - 1];
  int64_t total = cutegen::numel(out[0]);
  attack::fill<<<static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 65535)), 256, 0, s>>>(
      static_cast<float*>(out[0].data), total, 1.0f / static_cast<float>(n));
  return static_cast<int>(cudaGetLastError());
}
