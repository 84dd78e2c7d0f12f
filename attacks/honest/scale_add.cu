// Example for the kernel contract: problems/scale_add.py, out = x + alpha * y with alpha a Python
// float. forward()'s non-tensor argument arrives as a host scalar: inputs[2].is_host_scalar == 1,
// dtype CUTEGEN_FLOAT64, value in scalar_f (data is NULL). PyTorch multiplies a float32 tensor by a
// Python float in float32, so alpha is rounded to float once, on the host, and passed by value.
//
// CuTe views the three buffers as (4, n/4) so each thread moves 16-byte vectors with copy_aligned when
// everything is aligned, else as (1, n).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace scale_add_example {

template <int kVec>
__global__ void scale_add(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                         int64_t n, float alpha) {
  auto layout = make_layout(make_shape(Int<kVec>{}, n / kVec));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  Tensor gO = make_tensor(make_gmem_ptr(out), layout);
  Tensor a = make_tensor<float>(Shape<Int<kVec>>{});
  Tensor b = make_tensor<float>(Shape<Int<kVec>>{});
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < n / kVec; c += int64_t(gridDim.x) * blockDim.x) {
    copy_aligned(gX(_, c), a);
    copy_aligned(gY(_, c), b);
    CUTE_UNROLL
    for (int i = 0; i < kVec; ++i) a(i) = a(i) + alpha * b(i);
    copy_aligned(a, gO(_, c));
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace scale_add_example
using namespace scale_add_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 3 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  const float* y = cutegen::data_as<const float>(inputs[1], CUTEGEN_FLOAT32);
  float* out = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  const cutegen_tensor& alpha = inputs[2];
  if (!x || !y || !out || !alpha.is_host_scalar || alpha.dtype != CUTEGEN_FLOAT64) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t n = cutegen::numel(inputs[0]);
  if (cutegen::numel(inputs[1]) != n || cutegen::numel(outputs[0]) != n) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(inputs[0]) || !cutegen::is_contiguous(inputs[1]) || !cutegen::is_contiguous(outputs[0]))
    return CUTEGEN_ERROR_UNSUPPORTED;
  if (n == 0) return CUTEGEN_OK;
  const float a = static_cast<float>(alpha.scalar_f);
  const bool vec = n % 4 == 0 && aligned16(x) && aligned16(y) && aligned16(out);
  const int64_t items = vec ? n / 4 : n;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>((items + 255) / 256, 65535));
  if (vec)
    scale_add<4><<<grid, 256, 0, stream>>>(x, y, out, n, a);
  else
    scale_add<1><<<grid, 256, 0, stream>>>(x, y, out, n, a);
  return static_cast<int>(cudaGetLastError());
}
