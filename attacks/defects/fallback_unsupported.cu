// Attack (refusing the hard case): a fast shared-memory softmax for rows of up to 8192 values that
// returns CUTEGEN_ERROR_UNSUPPORTED for longer rows, hoping the harness falls back to PyTorch for them
// and credits the kernel with the result. problems/softmax_rows.py has rows of 65536.
// Expected: kernel_error (the kernel's own return code; nothing is computed for it).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kMaxRow = 8192;

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) {
    float o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = partial[0];
  for (int w = 1; w < kWarps; ++w) total = is_max ? fmaxf(total, partial[w]) : total + partial[w];
  __syncthreads();
  return total;
}

__global__ void softmax_smem(const float* x, float* y, int64_t rows, int64_t n) {
  __shared__ float row[kMaxRow];
  auto layout = cute::make_layout(cute::make_shape(n, rows));
  auto gx = cute::make_tensor(cute::make_gmem_ptr(x), layout);
  auto gy = cute::make_tensor(cute::make_gmem_ptr(y), layout);
  auto sr = cute::make_tensor(cute::make_smem_ptr(&row[0]), cute::make_layout(n));
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
      sr(i) = gx(i, r);
      m = fmaxf(m, sr(i));
    }
    m = block_reduce(m, true);
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) sum += expf(sr(i) - m);
    const float inv = 1.f / block_reduce(sum, false);
    for (int64_t i = threadIdx.x; i < n; i += kThreads) gy(i, r) = expf(sr(i) - m) * inv;
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
  if (n > attack::kMaxRow) return CUTEGEN_ERROR_UNSUPPORTED;  // "let someone else do the long rows"
  if (n == 0 || cutegen::numel(in[0]) == 0) return CUTEGEN_OK;
  const int64_t rows = cutegen::numel(in[0]) / n;
  attack::softmax_smem<<<static_cast<unsigned>(std::min<int64_t>(rows, 65535)), attack::kThreads, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), rows, n);
  return static_cast<int>(cudaGetLastError());
}
