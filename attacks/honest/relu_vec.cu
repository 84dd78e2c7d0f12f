// Example for the kernel contract: y = relu(x) for one contiguous fp32 tensor of any shape.
//
// CuTe structure: the flat tensor is viewed as (kTile, num_tiles); each CTA walks tiles grid-stride,
// and each thread's slice of a tile is a static (kVec, kUnroll) sub-tensor, so copy_aligned turns every
// load and store into a 16-byte access with kUnroll independent loads in flight. The last partial tile
// goes through a predicated element loop.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace relu_example {

constexpr int kThreads = 256;
constexpr int kVec = 4;     // 4 x fp32 = one 16-byte access
constexpr int kUnroll = 4;  // independent 16-byte loads per thread per tile
constexpr int kTile = kThreads * kVec * kUnroll;

// relu that keeps NaN as NaN, like torch.relu.
__device__ __forceinline__ float relu(float v) { return v < 0.f ? 0.f : v; }

__global__ void __launch_bounds__(kThreads) relu_tiles(const float* __restrict__ x, float* __restrict__ y,
                                                       int64_t num_tiles) {
  // (kTile, num_tiles): mode 0 is one tile, mode 1 picks the tile.
  auto tiles = make_layout(make_shape(Int<kTile>{}, num_tiles));
  Tensor gX = make_tensor(make_gmem_ptr(x), tiles);
  Tensor gY = make_tensor(make_gmem_ptr(y), tiles);
  // One tile as (vector, thread, unroll): thread t owns kVec contiguous values every kThreads*kVec elements.
  auto tv = make_layout(make_shape(Int<kVec>{}, Int<kThreads>{}, Int<kUnroll>{}),
                        make_stride(Int<1>{}, Int<kVec>{}, Int<kVec * kThreads>{}));
  Tensor frag = make_tensor<float>(make_shape(Int<kVec>{}, Int<kUnroll>{}));
  for (int64_t t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    Tensor tX = make_tensor(gX(_, t).data(), tv)(_, threadIdx.x, _);  // (kVec, kUnroll), static layout
    Tensor tY = make_tensor(gY(_, t).data(), tv)(_, threadIdx.x, _);
    copy_aligned(tX, frag);
    CUTE_UNROLL
    for (int i = 0; i < size(frag); ++i) frag(i) = relu(frag(i));
    copy_aligned(frag, tY);
  }
}

__global__ void relu_rest(const float* __restrict__ x, float* __restrict__ y, int64_t begin, int64_t n) {
  Tensor gX = make_tensor(make_gmem_ptr(x + begin), make_layout(n - begin));
  Tensor gY = make_tensor(make_gmem_ptr(y + begin), make_layout(n - begin));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < size(gX); i += int64_t(gridDim.x) * blockDim.x)
    gY(i) = relu(gX(i));
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace relu_example
using namespace relu_example;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor& in = inputs[0];
  const cutegen_tensor& out = outputs[0];
  const float* x = cutegen::data_as<const float>(in, CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out, CUTEGEN_FLOAT32);
  if (!x || !y || cutegen::numel(in) != cutegen::numel(out)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in) || !cutegen::is_contiguous(out)) return CUTEGEN_ERROR_UNSUPPORTED;

  const int64_t n = cutegen::numel(in);
  int64_t full_tiles = (aligned16(x) && aligned16(y)) ? n / kTile : 0;
  if (full_tiles > 0) {
    int sms = 132;
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    // Enough CTAs to fill every SM several times over; the grid-stride loop covers the rest.
    int64_t grid = std::min<int64_t>(full_tiles, int64_t(sms) * 8);
    relu_tiles<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(x, y, full_tiles);
  }
  int64_t begin = full_tiles * kTile;
  if (begin < n) {
    int64_t rest = n - begin;
    unsigned grid = static_cast<unsigned>(std::min<int64_t>((rest + 255) / 256, 4096));
    relu_rest<<<grid, 256, 0, stream>>>(x, y, begin, n);
  }
  return static_cast<int>(cudaGetLastError());
}
