// Example for the kernel contract: problems/row_sum.py, y[r] = sum(x[r, :]) for a contiguous fp32
// matrix (rows, cols), as a two-kernel sequence with a static __device__ workspace.
//
// Pass 1 spreads each row over several CTAs: CTA (chunk, row) sums kChunk consecutive values of its
// row (16-byte vectors through copy_aligned when aligned) and writes one partial to the workspace.
// Pass 2 adds a row's partials in chunk order. Both run on `stream`, so pass 2 starts after pass 1 has
// finished; every partial is rewritten on every call before it is read, and the fixed summation order
// makes the result deterministic. The workspace is a static __device__ array — memory the kernel
// owns, sized for the problem (rows x chunks <= kMaxPartials); larger shapes are refused, not
// overflowed.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace row_sum_example {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kChunk = 4096;           // values per CTA in pass 1: 16 per thread
constexpr int64_t kMaxPartials = 1 << 20;  // 4 MiB: 4096 rows x 256 chunks (rows of up to 1M values)

__device__ float g_partials[kMaxPartials];  // (chunk, row) : (1, chunks)

__device__ float block_sum(float v) {
  __shared__ float partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < kWarps; ++w) total += partial[w];
  return total;  // one use per CTA: no second barrier needed
}

// grid (chunks, rows). kVec = 4 when x is 16-byte aligned and cols % 4 == 0, else 1.
template <int kVec>
__global__ void __launch_bounds__(kThreads) partial_sums(const float* __restrict__ x, int64_t rows, int64_t cols) {
  const int64_t chunks = gridDim.x;
  const int64_t row = blockIdx.y, chunk = blockIdx.x;
  // The row as (kVec, cols/kVec) vectors; this CTA owns vectors [begin, end).
  Tensor gRow = make_tensor(make_gmem_ptr(x + row * cols),
                            make_layout(make_shape(Int<kVec>{}, cols / kVec)));
  Tensor frag = make_tensor<float>(Shape<Int<kVec>>{});
  const int64_t begin = chunk * (kChunk / kVec);
  const int64_t end = std::min<int64_t>(begin + kChunk / kVec, cols / kVec);
  float sum = 0.f;
  for (int64_t c = begin + threadIdx.x; c < end; c += kThreads) {
    copy_aligned(gRow(_, c), frag);
    CUTE_UNROLL
    for (int i = 0; i < kVec; ++i) sum += frag(i);
  }
  sum = block_sum(sum);
  Tensor partials = make_tensor(make_gmem_ptr(&g_partials[0]), make_layout(make_shape(chunks, rows)));
  if (threadIdx.x == 0) partials(chunk, row) = sum;
}

// One thread per row, adding its partials in chunk order.
__global__ void combine(float* __restrict__ y, int64_t rows, int64_t chunks) {
  Tensor partials = make_tensor(make_gmem_ptr(&g_partials[0]), make_layout(make_shape(chunks, rows)));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(rows));
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    float total = 0.f;
    for (int64_t c = 0; c < chunks; ++c) total += partials(c, r);
    gY(r) = total;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace row_sum_example
using namespace row_sum_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor &in = inputs[0], &out = outputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out, CUTEGEN_FLOAT32);
  if (!x || !y || in.rank < 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t cols = in.shape[in.rank - 1];
  const int64_t rows = cols ? cutegen::numel(in) / cols : cutegen::numel(out);
  if (cutegen::numel(out) != rows) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(out)) return CUTEGEN_ERROR_UNSUPPORTED;
  if (rows == 0) return CUTEGEN_OK;
  if (cols == 0) return CUTEGEN_ERROR_UNSUPPORTED;  // sums of empty rows (zeros): not worth a kernel here
  const int64_t chunks = (cols + kChunk - 1) / kChunk;
  if (rows * chunks > kMaxPartials || rows > 65535 || chunks > INT32_MAX) return CUTEGEN_ERROR_UNSUPPORTED;

  dim3 grid1(static_cast<unsigned>(chunks), static_cast<unsigned>(rows));
  if (cols % 4 == 0 && aligned16(x))
    partial_sums<4><<<grid1, kThreads, 0, stream>>>(x, rows, cols);
  else
    partial_sums<1><<<grid1, kThreads, 0, stream>>>(x, rows, cols);
  const unsigned grid2 = static_cast<unsigned>(std::min<int64_t>((rows + 255) / 256, 65535));
  combine<<<grid2, 256, 0, stream>>>(y, rows, chunks);
  return static_cast<int>(cudaGetLastError());
}
