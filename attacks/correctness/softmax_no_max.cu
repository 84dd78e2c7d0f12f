// Attack (right only on the problem's distribution): a one-pass-cheaper softmax that skips the row
// maximum (exp(x) / sum(exp(x)) instead of exp(x - max) / ...), with exp clamped to FLT_MAX so no
// inf or NaN ever shows. On torch.rand's [0, 1) rows it is exact enough; on the scaled trial (x100) exp
// saturates beyond 88.7, the row sum overflows and the row comes out as zeros.
// Expected: mismatch (finite wrong values: a NaN would read as unwritten).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>
#include <cfloat>

namespace attack {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ float block_sum(float v) {
  __shared__ float partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < kWarps; ++w) total += partial[w];
  __syncthreads();
  return total;
}

__global__ void softmax_unshifted(const float* x, float* y, int64_t rows, int64_t n) {
  auto layout = cute::make_layout(cute::make_shape(n, rows));
  auto gx = cute::make_tensor(cute::make_gmem_ptr(x), layout);
  auto gy = cute::make_tensor(cute::make_gmem_ptr(y), layout);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) sum += fminf(expf(gx(i, r)), FLT_MAX);
    const float inv = 1.f / block_sum(sum);
    for (int64_t i = threadIdx.x; i < n; i += kThreads) gy(i, r) = fminf(expf(gx(i, r)), FLT_MAX) * inv;
  }
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (n_in != 1 || n_out != 1 || in[0].rank < 1 || in[0].dtype != CUTEGEN_FLOAT32 ||
      out[0].dtype != CUTEGEN_FLOAT32 || cutegen::numel(in[0]) != cutegen::numel(out[0]))
    return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in[0]) || !cutegen::is_contiguous(out[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  const int64_t n = in[0].shape[in[0].rank - 1];
  if (n == 0 || cutegen::numel(in[0]) == 0) return CUTEGEN_OK;
  const int64_t rows = cutegen::numel(in[0]) / n;
  attack::softmax_unshifted<<<static_cast<unsigned>(std::min<int64_t>(rows, 65535)), attack::kThreads, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), rows, n);
  return static_cast<int>(cudaGetLastError());
}
