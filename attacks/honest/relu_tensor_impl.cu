// y = relu(x) over CuTe tensors and nothing else of CuTe: no copy or MMA atom, so it includes
// <cute/tensor_impl.hpp> (layouts and tensors) instead of <cute/tensor.hpp>, and nvcc parses half as
// much (benchmarks/results.md, "Compile times"). The control for that include: the CuTe rule must hold for
// a kernel whose CuTe comes from tensor_impl.hpp alone.
//
// CuTe structure: the flat input and output as rank-1 tensors, each thread walking them grid-stride.
#include <cutegen/kernel.h>

#include <cute/tensor_impl.hpp>

namespace relu_tensor_impl {
using namespace cute;

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += stride) gY(i) = fmaxf(gX(i), 0.f);
}
}  // namespace relu_tensor_impl

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || cutegen::numel(inputs[0]) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(inputs[0]);
  if (n == 0) return CUTEGEN_OK;
  relu_tensor_impl::relu_kernel<<<2048, 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
