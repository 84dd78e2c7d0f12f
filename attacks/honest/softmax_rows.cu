// Example for the kernel contract: y = softmax(x, dim=-1) for a contiguous fp32 tensor (..., N).
//
// One CTA per row. CuTe views the row as (kVec, N/kVec) so each thread reads 16-byte vectors with
// copy_aligned. Pass 1 keeps a running (max, sum) per thread, rescaling the sum when the max grows
// (the online-softmax recurrence), so the row is read once for statistics; warp shuffles and a small
// shared-memory exchange combine the per-thread pairs; pass 2 writes exp(x - max) / sum.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace softmax_example {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.f};  // both empty: avoid (-inf) - (-inf)
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

__device__ MaxSum block_reduce(MaxSum v) {
  __shared__ MaxSum partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum o{__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)};
    v = combine(v, o);
  }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < kWarps ? partial[lane] : MaxSum{-INFINITY, 0.f};
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum o{__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)};
    v = combine(v, o);
  }
  return v;  // every thread holds the row's (max, sum)
}

// kVec = 4 when rows are 16-byte aligned and N % 4 == 0, else 1.
template <int kVec>
__global__ void __launch_bounds__(kThreads) softmax_rows(const float* __restrict__ x, float* __restrict__ y,
                                                         int64_t rows, int64_t n) {
  const int64_t chunks = n / kVec;
  // (kVec, chunks, rows): a row is a sequence of kVec-wide chunks.
  auto layout = make_layout(make_shape(Int<kVec>{}, chunks, rows), make_stride(Int<1>{}, Int<kVec>{}, n));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    Tensor rowX = gX(_, _, r);  // (kVec, chunks)
    Tensor rowY = gY(_, _, r);
    MaxSum acc{-INFINITY, 0.f};
    for (int64_t c = threadIdx.x; c < chunks; c += kThreads) {
      copy_aligned(rowX(_, c), frag);
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) acc = combine(acc, MaxSum{frag(i), 1.f});
    }
    MaxSum row = block_reduce(acc);
    float inv = 1.f / row.sum;
    for (int64_t c = threadIdx.x; c < chunks; c += kThreads) {
      copy_aligned(rowX(_, c), frag);
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) frag(i) = expf(frag(i) - row.max) * inv;
      copy_aligned(frag, rowY(_, c));
    }
    __syncthreads();  // `partial` is reused by the next row
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace softmax_example
using namespace softmax_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor& in = inputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || in.rank < 1 || cutegen::numel(in) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(outputs[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  const int64_t n = in.shape[in.rank - 1];
  if (n == 0) return CUTEGEN_OK;
  const int64_t rows = cutegen::numel(in) / n;
  if (rows == 0) return CUTEGEN_OK;
  unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, 65535));
  if (n % 4 == 0 && aligned16(x) && aligned16(y))
    softmax_rows<4><<<grid, kThreads, 0, stream>>>(x, y, rows, n);
  else
    softmax_rows<1><<<grid, kThreads, 0, stream>>>(x, y, rows, n);
  return static_cast<int>(cudaGetLastError());
}
