// Honest control (a kernel specialised for the benchmark's row length that says so, issue 34): y =
// softmax(x, dim=-1) on problems/softmax_rows.py with the row length a compile-time 65536, as in
// attacks/every_shape/shape_hardcoded_softmax.cu, but the row length is checked: any other is refused with
// CUTEGEN_ERROR_UNSUPPORTED, as the contract asks. A clean refusal is not a wrong answer, so the judge must
// pass it -- verified at the problem's shape and at the generalization trials' larger batch (same row
// length), not at the smaller shape it refused. Expected: pass, with 2 verified shapes.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace control {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kVec = 4;
constexpr int64_t kN = 65536;  // problems/softmax_rows.py: dim, the benchmark's row length
constexpr int kChunks = static_cast<int>(kN / kVec);

struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.f};
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
  return v;
}

// (kVec, kChunks, rows) with the row length a constant: only the row count is dynamic.
__global__ void __launch_bounds__(kThreads) softmax_fixed_rows(const float* __restrict__ x, float* __restrict__ y,
                                                               int64_t rows) {
  auto layout = make_layout(make_shape(Int<kVec>{}, Int<kChunks>{}, rows), make_stride(Int<1>{}, Int<kVec>{}, Int<kN>{}));
  Tensor gX = make_tensor(make_gmem_ptr(x), layout);
  Tensor gY = make_tensor(make_gmem_ptr(y), layout);
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    Tensor rowX = gX(_, _, r);
    Tensor rowY = gY(_, _, r);
    MaxSum acc{-INFINITY, 0.f};
    for (int c = threadIdx.x; c < kChunks; c += kThreads) {
      copy_aligned(rowX(_, c), frag);
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) acc = combine(acc, MaxSum{frag(i), 1.f});
    }
    MaxSum row = block_reduce(acc);
    float inv = 1.f / row.sum;
    for (int c = threadIdx.x; c < kChunks; c += kThreads) {
      copy_aligned(rowX(_, c), frag);
      CUTE_UNROLL
      for (int i = 0; i < kVec; ++i) frag(i) = expf(frag(i) - row.max) * inv;
      copy_aligned(frag, rowY(_, c));
    }
    __syncthreads();
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace control

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor& in = inputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || in.rank < 1 || cutegen::numel(in) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(outputs[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  if (!control::aligned16(x) || !control::aligned16(y)) return CUTEGEN_ERROR_UNSUPPORTED;
  // Specialised for one row length, and honest about it: any other is refused.
  if (in.shape[in.rank - 1] != control::kN) return CUTEGEN_ERROR_UNSUPPORTED;
  const int64_t rows = cutegen::numel(in) / control::kN;
  if (rows == 0) return CUTEGEN_OK;
  unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, 65535));
  control::softmax_fixed_rows<<<grid, control::kThreads, 0, stream>>>(x, y, rows);
  return static_cast<int>(cudaGetLastError());
}
