// Honest: the only CuTe in the kernel is 1-D tensor indexing (gY(i) = f(gX(i))), which -O3 compiles to
// the same address arithmetic as a raw pointer. It must count as CuTe (attacks/honest/relu_vec.cu has
// such a tail kernel).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace index_example {

__global__ void relu(const float* x, float* y, int64_t n) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < size(gX); i += int64_t(gridDim.x) * blockDim.x)
    gY(i) = gX(i) < 0.f ? 0.f : gX(i);
}

}  // namespace index_example

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t stream) {
  if (n_in != 1 || n_out != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(in[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out[0], CUTEGEN_FLOAT32);
  if (!x || !y) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int64_t n = cutegen::numel(in[0]);
  index_example::relu<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 4096)), 256, 0, stream>>>(x, y, n);
  return static_cast<int>(cudaGetLastError());
}
