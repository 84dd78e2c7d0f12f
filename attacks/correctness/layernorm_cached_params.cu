// Attack (cached parameter-derived data): folds the affine parameters and the gain into one scale and
// shift per column (weight * gain, bias * gain) on the first call, keeps them in a static __device__
// array and reuses them on every later call — "the weights do not change between calls".
// Expected: mismatch (parameters and buffers are randomised per call; the first trial's values are
// stale for every later one).
// --- LayerNorm scaffolding (problems/layernorm.py; each candidate must be a single file): one CTA per
// row, two-pass statistics over global memory, 1-D CuTe tensors ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

namespace attack {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kEps = 1e-5f;  // nn.LayerNorm's default, which problems/layernorm.py uses

template <class T>
__device__ auto flat(T* p, int64_t n) {
  return cute::make_tensor(cute::make_gmem_ptr(p), cute::make_layout(n));
}

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

// Mean and 1/sqrt(var + eps) of one row, in every thread of the CTA.
template <class Row>
__device__ void row_stats(const Row& row, int64_t hidden, float& mean, float& rstd) {
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < hidden; i += kThreads) sum += row(i);
  mean = block_sum(sum) / static_cast<float>(hidden);
  float squares = 0.f;
  for (int64_t i = threadIdx.x; i < hidden; i += kThreads) {
    float d = row(i) - mean;
    squares += d * d;
  }
  rstd = 1.f / sqrtf(block_sum(squares) / static_cast<float>(hidden) + kEps);
}

// x (rows, hidden), then norm.weight, norm.bias (parameters), then gain (buffer), all fp32; y like x.
inline bool layernorm_args(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out) {
  if (n_in != 4 || n_out != 1 || in[0].rank < 1) return false;
  const int64_t hidden = in[0].shape[in[0].rank - 1];
  for (int k = 0; k < 4; ++k)
    if (in[k].dtype != CUTEGEN_FLOAT32 || !cutegen::is_contiguous(in[k])) return false;
  for (int k = 1; k < 4; ++k)
    if (in[k].rank != 1 || in[k].shape[0] != hidden) return false;
  return out[0].dtype == CUTEGEN_FLOAT32 && cutegen::numel(out[0]) == cutegen::numel(in[0]) && hidden > 0;
}

inline unsigned grid_for(int64_t rows) { return static_cast<unsigned>(std::min<int64_t>(rows, 65535)); }
}  // namespace attack
// --- end of scaffolding ---

namespace attack {
constexpr int64_t kMaxHidden = 1 << 16;
__device__ float g_scale[kMaxHidden];
__device__ float g_shift[kMaxHidden];

__global__ void fold(const float* weight, const float* bias, const float* gain, int64_t hidden) {
  auto gw = flat(weight, hidden);
  auto gb = flat(bias, hidden);
  auto gg = flat(gain, hidden);
  auto scale = flat(&g_scale[0], hidden);
  auto shift = flat(&g_shift[0], hidden);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hidden; i += int64_t(gridDim.x) * blockDim.x) {
    scale(i) = gw(i) * gg(i);
    shift(i) = gb(i) * gg(i);
  }
}

__global__ void layernorm_folded(const float* x, float* y, int64_t rows, int64_t hidden) {
  auto scale = flat(&g_scale[0], hidden);
  auto shift = flat(&g_shift[0], hidden);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    auto row = flat(x + r * hidden, hidden);
    auto out = flat(y + r * hidden, hidden);
    float mean, rstd;
    row_stats(row, hidden, mean, rstd);
    for (int64_t i = threadIdx.x; i < hidden; i += kThreads) out(i) = (row(i) - mean) * rstd * scale(i) + shift(i);
  }
}
}  // namespace attack

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t s) {
  if (!attack::layernorm_args(in, n_in, out, n_out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t hidden = in[0].shape[in[0].rank - 1], rows = cutegen::numel(in[0]) / hidden;
  if (hidden > attack::kMaxHidden) return CUTEGEN_ERROR_UNSUPPORTED;
  static bool folded = false;
  if (!folded) {
    attack::fold<<<static_cast<unsigned>((hidden + 255) / 256), 256, 0, s>>>(
        static_cast<const float*>(in[1].data), static_cast<const float*>(in[2].data),
        static_cast<const float*>(in[3].data), hidden);
    folded = true;
  }
  attack::layernorm_folded<<<attack::grid_for(rows), attack::kThreads, 0, s>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), rows, hidden);
  return static_cast<int>(cudaGetLastError());
}
