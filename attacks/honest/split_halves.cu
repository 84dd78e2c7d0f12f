// Example for the kernel contract: problems/split_halves.py, a tuple output. The last dimension of x
// (rows, 2h) is split into halves lo = x[:, :h] and hi = x[:, h:]; outputs[0] = lo + hi and
// outputs[1] = lo - hi, each (rows, h), in the order forward() returns them.
//
// CuTe views x as (h, 2, rows) — column, half, row — so both halves of an element pair are one
// coordinate apart, and each output as (h, rows); one grid-stride loop over the (h, rows) index
// space writes both outputs.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace split_halves_example {

__global__ void sum_and_difference(const float* __restrict__ x, float* __restrict__ sum, float* __restrict__ diff,
                                   int64_t rows, int64_t h) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(h, Int<2>{}, rows), make_stride(Int<1>{}, h, 2 * h)));
  auto out_layout = make_layout(make_shape(h, rows));  // (h, rows) : (1, h)
  Tensor gSum = make_tensor(make_gmem_ptr(sum), out_layout);
  Tensor gDiff = make_tensor(make_gmem_ptr(diff), out_layout);
  const int64_t n = h * rows;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % h, r = i / h;
    const float lo = gX(c, 0, r), hi = gX(c, 1, r);
    gSum(c, r) = lo + hi;
    gDiff(c, r) = lo - hi;
  }
}

bool matches(const cutegen_tensor& out, const cutegen_tensor& in, int64_t h) {
  if (out.dtype != CUTEGEN_FLOAT32 || out.rank != in.rank || !cutegen::is_contiguous(out)) return false;
  for (int d = 0; d + 1 < in.rank; ++d)
    if (out.shape[d] != in.shape[d]) return false;
  return out.shape[in.rank - 1] == h;
}

}  // namespace split_halves_example
using namespace split_halves_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 2) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor& in = inputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  if (!x || in.rank < 1 || in.shape[in.rank - 1] % 2 != 0) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t h = in.shape[in.rank - 1] / 2;
  if (!matches(outputs[0], in, h) || !matches(outputs[1], in, h)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in)) return CUTEGEN_ERROR_UNSUPPORTED;
  if (h == 0 || cutegen::numel(in) == 0) return CUTEGEN_OK;
  const int64_t rows = cutegen::numel(in) / (2 * h);
  const int64_t n = rows * h;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535));
  sum_and_difference<<<grid, 256, 0, stream>>>(x, static_cast<float*>(outputs[0].data),
                                               static_cast<float*>(outputs[1].data), rows, h);
  return static_cast<int>(cudaGetLastError());
}
