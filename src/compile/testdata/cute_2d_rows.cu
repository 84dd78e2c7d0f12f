// Honest: a row-major 2-D view indexed by (row, column) -- the row's offset is a multiply -O3 keeps, so the
// build's own PTX still carries CuTe's layout evaluation (cute_usage.h, build_evidence) and the unoptimised
// analysis compile is not needed.
#include <cutegen/kernel.h>

#include <cute/tensor_impl.hpp>

using namespace cute;

namespace rows_example {

__global__ void scale_rows(const float* x, float* y, int rows, int cols) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(rows, cols), make_stride(cols, Int<1>{})));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(make_shape(rows, cols), make_stride(cols, Int<1>{})));
  for (int r = blockIdx.x; r < rows; r += gridDim.x)
    for (int c = threadIdx.x; c < cols; c += blockDim.x) gY(r, c) = 2.f * gX(r, c);
}

}  // namespace rows_example

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t stream) {
  if (n_in != 1 || n_out != 1 || in[0].rank != 2) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(in[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out[0], CUTEGEN_FLOAT32);
  if (!x || !y) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int rows = static_cast<int>(in[0].shape[0]), cols = static_cast<int>(in[0].shape[1]);
  rows_example::scale_rows<<<std::min(rows, 4096), 256, 0, stream>>>(x, y, rows, cols);
  return static_cast<int>(cudaGetLastError());
}
