// Example for the kernel contract's workspace (version 2): y = softmax(x, dim=-1) for a contiguous fp32
// tensor (..., N) whose rows are too long for one CTA each -- problems/softmax_long_rows.py has 16 rows
// of 4M values, so one CTA per row would leave 116 of an H200's 132 SMs idle.
//
// Each row is split into chunks of kChunk values, one CTA per (chunk, row):
//   pass 1 (chunk_stats): the chunk's (max, sum of exp(x - max)) with the online-softmax recurrence,
//          written to the workspace at (chunk, row);
//   pass 2 (normalize):   every CTA of a row combines that row's partials (all of them, in a fixed
//          order, so every chunk gets the same bit-identical (max, sum)), then writes exp(x - max) / sum
//          for its own chunk.
// The partials need memory that lives from one kernel to the next: the harness's workspace, sized by
// cutegen_workspace_bytes from the shapes alone. Pass 1 writes every partial before pass 2 reads it
// (both run on `stream`, in order), so the garbage the harness leaves in the workspace never matters.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace softmax_split_example {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kChunk = 32768;  // values per CTA: 128 per thread, 32 float4 loads each

struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return {m, 0.f};  // both empty: avoid (-inf) - (-inf)
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// Every thread gets the block's (max, sum); the shuffle tree's order is fixed, so the result is
// deterministic. Call it once per kernel (`partial` is not guarded for reuse).
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

// The workspace as (2, chunks, rows) floats: (0, c, r) the chunk's max, (1, c, r) its sum.
__device__ auto partials_tensor(float* ws, int64_t chunks, int64_t rows) {
  return make_tensor(make_gmem_ptr(ws), make_layout(make_shape(Int<2>{}, chunks, rows)));
}

// The row as (kVec, n/kVec) vectors; this CTA owns vectors [begin, end) of it.
template <int kVec>
__device__ auto row_tensor(float* p, int64_t row, int64_t n) {
  return make_tensor(make_gmem_ptr(p + row * n), make_layout(make_shape(Int<kVec>{}, n / kVec)));
}

// grid (chunks, rows). kVec = 4 when the tensors are 16-byte aligned and n % 4 == 0, else 1.
template <int kVec>
__global__ void __launch_bounds__(kThreads) chunk_stats(const float* __restrict__ x, float* __restrict__ ws,
                                                        int64_t rows, int64_t n) {
  const int64_t chunks = gridDim.x, chunk = blockIdx.x, row = blockIdx.y;
  Tensor gRow = row_tensor<kVec>(const_cast<float*>(x), row, n);
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  const int64_t begin = chunk * (kChunk / kVec);
  const int64_t end = std::min<int64_t>(begin + kChunk / kVec, n / kVec);
  MaxSum acc{-INFINITY, 0.f};
  for (int64_t c = begin + threadIdx.x; c < end; c += kThreads) {
    copy_aligned(gRow(_, c), frag);
    CUTE_UNROLL
    for (int i = 0; i < kVec; ++i) acc = combine(acc, MaxSum{frag(i), 1.f});
  }
  MaxSum total = block_reduce(acc);
  Tensor partials = partials_tensor(ws, chunks, rows);
  if (threadIdx.x == 0) {
    partials(0, chunk, row) = total.max;
    partials(1, chunk, row) = total.sum;
  }
}

template <int kVec>
__global__ void __launch_bounds__(kThreads) normalize(const float* __restrict__ x, float* __restrict__ y,
                                                      const float* __restrict__ ws, int64_t rows, int64_t n) {
  const int64_t chunks = gridDim.x, chunk = blockIdx.x, row = blockIdx.y;
  Tensor partials = partials_tensor(const_cast<float*>(ws), chunks, rows);
  MaxSum acc{-INFINITY, 0.f};
  for (int64_t c = threadIdx.x; c < chunks; c += kThreads) acc = combine(acc, MaxSum{partials(0, c, row), partials(1, c, row)});
  MaxSum stats = block_reduce(acc);
  const float inv = 1.f / stats.sum;
  Tensor gX = row_tensor<kVec>(const_cast<float*>(x), row, n);
  Tensor gY = row_tensor<kVec>(y, row, n);
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  const int64_t begin = chunk * (kChunk / kVec);
  const int64_t end = std::min<int64_t>(begin + kChunk / kVec, n / kVec);
  for (int64_t c = begin + threadIdx.x; c < end; c += kThreads) {
    copy_aligned(gX(_, c), frag);
    CUTE_UNROLL
    for (int i = 0; i < kVec; ++i) frag(i) = expf(frag(i) - stats.max) * inv;
    copy_aligned(frag, gY(_, c));
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// (rows, n, chunks) of a valid argument list, else false. Shapes only: the workspace size is asked with
// descriptors whose data pointers are NULL.
bool geometry(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
              int64_t& rows, int64_t& n, int64_t& chunks) {
  if (num_inputs != 1 || num_outputs != 1) return false;
  const cutegen_tensor &in = inputs[0], &out = outputs[0];
  if (in.dtype != CUTEGEN_FLOAT32 || out.dtype != CUTEGEN_FLOAT32 || in.rank < 1) return false;
  if (cutegen::numel(in) != cutegen::numel(out) || !cutegen::is_contiguous(in) || !cutegen::is_contiguous(out))
    return false;
  n = in.shape[in.rank - 1];
  if (n <= 0) return false;
  rows = cutegen::numel(in) / n;
  chunks = (n + kChunk - 1) / kChunk;
  return rows > 0 && rows <= 65535 && chunks <= 0x7fffffff;
}

}  // namespace softmax_split_example
using namespace softmax_split_example;

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* inputs, int32_t num_inputs,
                                          const cutegen_tensor* outputs, int32_t num_outputs) {
  int64_t rows = 0, n = 0, chunks = 0;
  if (!geometry(inputs, num_inputs, outputs, num_outputs, rows, n, chunks)) return 0;  // the load fails, saying so
  return static_cast<size_t>(2 * chunks * rows) * sizeof(float);
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                                  int32_t num_outputs, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  int64_t rows = 0, n = 0, chunks = 0;
  if (!geometry(inputs, num_inputs, outputs, num_outputs, rows, n, chunks)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (workspace_bytes < static_cast<size_t>(2 * chunks * rows) * sizeof(float)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  float* ws = static_cast<float*>(workspace);
  dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(rows));
  if (n % 4 == 0 && aligned16(x) && aligned16(y)) {
    chunk_stats<4><<<grid, kThreads, 0, stream>>>(x, ws, rows, n);
    normalize<4><<<grid, kThreads, 0, stream>>>(x, y, ws, rows, n);
  } else {
    chunk_stats<1><<<grid, kThreads, 0, stream>>>(x, ws, rows, n);
    normalize<1><<<grid, kThreads, 0, stream>>>(x, y, ws, rows, n);
  }
  return static_cast<int>(cudaGetLastError());
}
