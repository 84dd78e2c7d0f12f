// For nvcc_plan_test: y = scale * x, where `scale` has internal linkage. The host stub registers it under
// a name that carries the module id (`_ZN..._INTERNAL_<id>...`), so a build whose two halves disagreed on
// the id could not find it at load time: the id must reach both the stub and the PTX.
#include <cutegen/kernel.h>

#include <cute/tensor_impl.hpp>

using namespace cute;

namespace module_id_example {

static __device__ float scale = 2.f;

__global__ void scaled(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(n));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(n));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    gY(i) = scale * gX(i);
}

}  // namespace module_id_example
using namespace module_id_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || cutegen::numel(inputs[0]) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(inputs[0]);
  if (n == 0) return CUTEGEN_OK;
  scaled<<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)), 256, 0, stream>>>(x, y, n);
  return static_cast<int>(cudaGetLastError());
}
