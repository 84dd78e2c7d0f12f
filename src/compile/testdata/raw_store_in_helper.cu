// Dishonest: the outputs are written by raw code in a helper (not force-inlined) that also reads a CuTe tensor
// on another line. At -O3 the helper is inlined, so every instruction of its body carries the kernel's call
// line in its inline chain: were that call line a CuTe site, the raw store would pass as CuTe's. The -O0
// analysis (the helper a function of its own) and the build's own evidence (innermost sites only) both reject it.
#include <cutegen/kernel.h>

#include <cute/tensor_impl.hpp>

using namespace cute;

namespace helper_example {

template <class T>
__device__ void store_doubled(const T& gX, float* y, int r, int c, int cols) {
  const float v = gX(r, c);
  y[r * cols + c] = 2.f * v;
}

__global__ void scale_rows(const float* x, float* y, int rows, int cols) {
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(rows, cols), make_stride(cols, Int<1>{})));
  for (int r = blockIdx.x; r < rows; r += gridDim.x)
    for (int c = threadIdx.x; c < cols; c += blockDim.x) store_doubled(gX, y, r, c, cols);
}

}  // namespace helper_example

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t stream) {
  if (n_in != 1 || n_out != 1 || in[0].rank != 2) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(in[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out[0], CUTEGEN_FLOAT32);
  if (!x || !y) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int rows = static_cast<int>(in[0].shape[0]), cols = static_cast<int>(in[0].shape[1]);
  helper_example::scale_rows<<<std::min(rows, 4096), 256, 0, stream>>>(x, y, rows, cols);
  return static_cast<int>(cudaGetLastError());
}
