// Example for the kernel contract: problems/layernorm.py, y = LayerNorm(x) * gain, with the model's
// parameters and buffer as inputs in the contract's order:
//   inputs[0] x (rows, hidden), inputs[1] norm.weight (hidden), inputs[2] norm.bias (hidden)
//   — named_parameters() — then inputs[3] gain (hidden) — named_buffers().
// y = ((x - mean) / sqrt(var + eps) * weight + bias) * gain, biased variance, eps = 1e-5 (nn.LayerNorm's
// default, which the problem uses: the contract passes tensors, not module settings).
//
// One CTA per row (grid-stride over rows). CuTe views a row as (kVec, hidden/kVec) so each thread moves
// 16-byte vectors with copy_aligned; the row is read from global memory once into shared memory, then
// statistics are two-pass (mean, then the mean of squared deviations) for accuracy, reduced with warp
// shuffles and a fixed-order sum over warps (deterministic). Each thread only ever touches its own
// chunks of the shared row, so the row needs no barrier of its own; the reductions have theirs.
// Parameters and the buffer are read on every call: they change between calls.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace layernorm_example {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kEps = 1e-5f;
constexpr int kMaxHidden = 12288;  // the row in shared memory: 48 KiB, the default limit

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The CTA's total, in every thread.
__device__ float block_sum(float v) {
  __shared__ float partial[kWarps];
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < kWarps; ++w) total += partial[w];
  __syncthreads();  // `partial` is reused by the next call
  return total;
}

// kVec = 4 when every pointer is 16-byte aligned and hidden % 4 == 0, else 1.
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    layernorm_rows(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                   const float* __restrict__ gain, float* __restrict__ y, int64_t rows, int hidden) {
  extern __shared__ float4 smem_row[];  // float4: 16-byte aligned
  const int chunks = hidden / kVec;
  auto row_layout = make_layout(make_shape(Int<kVec>{}, chunks));  // (kVec, chunks) : (1, kVec)
  Tensor sX = make_tensor(make_smem_ptr(reinterpret_cast<float*>(smem_row)), row_layout);
  Tensor gW = make_tensor(make_gmem_ptr(weight), row_layout);
  Tensor gB = make_tensor(make_gmem_ptr(bias), row_layout);
  Tensor gG = make_tensor(make_gmem_ptr(gain), row_layout);
  auto layout = make_layout(make_shape(Int<kVec>{}, chunks, rows), make_stride(Int<1>{}, Int<kVec>{}, int64_t(hidden)));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);  // (kVec, chunks, rows)
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  Tensor v = make_tensor<float>(Shape<Int<kVec>>{});
  Tensor w = make_tensor<float>(Shape<Int<kVec>>{});
  Tensor b = make_tensor<float>(Shape<Int<kVec>>{});
  Tensor g = make_tensor<float>(Shape<Int<kVec>>{});

  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    Tensor rowX = gX(_, _, r);
    Tensor rowY = gY(_, _, r);
    float sum = 0.f;
    for (int c = threadIdx.x; c < chunks; c += kThreads) {
      copy_aligned(rowX(_, c), v);
      copy(v, sX(_, c));
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) sum += v(i);
    }
    const float mean = block_sum(sum) / static_cast<float>(hidden);
    float squares = 0.f;
    for (int c = threadIdx.x; c < chunks; c += kThreads) {
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) {
        const float d = sX(i, c) - mean;
        squares += d * d;
      }
    }
    const float rstd = 1.f / sqrtf(block_sum(squares) / static_cast<float>(hidden) + kEps);
    for (int c = threadIdx.x; c < chunks; c += kThreads) {
      copy_aligned(gW(_, c), w);
      copy_aligned(gB(_, c), b);
      copy_aligned(gG(_, c), g);
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) v(i) = ((sX(i, c) - mean) * rstd * w(i) + b(i)) * g(i);
      copy_aligned(v, rowY(_, c));
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

bool is_vector(const cutegen_tensor& t, int64_t n) {
  return t.rank == 1 && t.shape[0] == n && t.dtype == CUTEGEN_FLOAT32 && cutegen::is_contiguous(t);
}

}  // namespace layernorm_example
using namespace layernorm_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 4 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor &in = inputs[0], &out = outputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out, CUTEGEN_FLOAT32);
  if (!x || !y || in.rank < 1 || cutegen::numel(in) != cutegen::numel(out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t hidden = in.shape[in.rank - 1];
  if (!is_vector(inputs[1], hidden) || !is_vector(inputs[2], hidden) || !is_vector(inputs[3], hidden))
    return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(out)) return CUTEGEN_ERROR_UNSUPPORTED;
  if (hidden == 0 || cutegen::numel(in) == 0) return CUTEGEN_OK;
  if (hidden > kMaxHidden) return CUTEGEN_ERROR_UNSUPPORTED;
  const int64_t rows = cutegen::numel(in) / hidden;
  const float* w = static_cast<const float*>(inputs[1].data);
  const float* b = static_cast<const float*>(inputs[2].data);
  const float* g = static_cast<const float*>(inputs[3].data);

  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, 65535));
  const size_t smem = static_cast<size_t>(hidden) * sizeof(float);
  const bool vec = hidden % 4 == 0 && aligned16(x) && aligned16(y) && aligned16(w) && aligned16(b) && aligned16(g);
  if (vec)
    layernorm_rows<4><<<grid, kThreads, smem, stream>>>(x, w, b, g, y, rows, static_cast<int>(hidden));
  else
    layernorm_rows<1><<<grid, kThreads, smem, stream>>>(x, w, b, g, y, rows, static_cast<int>(hidden));
  return static_cast<int>(cudaGetLastError());
}
