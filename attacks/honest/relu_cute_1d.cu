// Example for the kernel contract: y = relu(x) for one contiguous fp32 tensor of any shape, written
// with the plainest CuTe there is: both buffers as 1-D tensors and element access t(i) in a grid-stride
// loop. Nothing vectorised or tiled (relu_vec.cu is the fast version); this is the floor of what counts
// as using CuTe — a layout maps every index. It uses no copy or MMA atom, so it includes CuTe's tensors
// alone, half of nvcc's time (benchmarks/results.md, "Compile times"): the control that the CuTe rule holds
// for a kernel whose CuTe comes from tensor_impl.hpp.
#include <cutegen/kernel.h>

#include <cute/tensor_impl.hpp>

using namespace cute;

namespace relu_1d_example {

__global__ void relu_1d(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = gX(i);
    gY(i) = v < 0.f ? 0.f : v;  // NaN stays NaN, like torch.relu
  }
}

}  // namespace relu_1d_example
using namespace relu_1d_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || cutegen::numel(inputs[0]) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(inputs[0]) || !cutegen::is_contiguous(outputs[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  const int64_t n = cutegen::numel(inputs[0]);
  if (n == 0) return CUTEGEN_OK;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535));
  relu_1d<<<grid, 256, 0, stream>>>(x, y, n);
  return static_cast<int>(cudaGetLastError());
}
