// relu(x) for one contiguous fp32 tensor: the flat tensor viewed as (kThreads, num_tiles) tiles;
// each CTA walks tiles grid-stride and each thread owns one element of a tile.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace relu_kernel {

constexpr int kThreads = 64;
constexpr int kVec = 4;     // 4 x fp32 = one 16-byte access
constexpr int kUnroll = 1;  // one 16-byte load per thread per tile: more tiles, finer load balance
constexpr int kTile = kThreads * kVec * kUnroll;

// relu that keeps NaN as NaN, like torch.relu.
__device__ __forceinline__ float relu(float v) { return v < 0.f ? 0.f : v; }

__global__ void __launch_bounds__(kThreads) relu_tiles(const float* __restrict__ x, float* __restrict__ y,
                                                       int64_t num_tiles) {
  auto tiles = make_layout(make_shape(Int<kTile>{}, num_tiles));  // (kTile, num_tiles)
  Tensor gX = make_tensor(make_gmem_ptr(x), tiles);
  Tensor gY = make_tensor(make_gmem_ptr(y), tiles);
  // One tile as (vector, thread, unroll): thread t owns kVec contiguous values every kThreads*kVec.
  auto tv = make_layout(make_shape(Int<kVec>{}, Int<kThreads>{}, Int<kUnroll>{}),
                        make_stride(Int<1>{}, Int<kVec>{}, Int<kVec * kThreads>{}));
  Tensor frag = make_tensor<float>(make_shape(Int<kVec>{}, Int<kUnroll>{}));
  for (int64_t t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    Tensor tX = make_tensor(gX(_, t).data(), tv)(_, threadIdx.x, _);  // (kVec, kUnroll)
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
  for (int64_t i = threadIdx.x; i < size(gX); i += blockDim.x) gY(i) = relu(gX(i));
}

}  // namespace relu_kernel
using namespace relu_kernel;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(outputs[0], CUTEGEN_FLOAT32);
  if (!x || !y || cutegen::numel(inputs[0]) != cutegen::numel(outputs[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(inputs[0]) || !cutegen::is_contiguous(outputs[0])) return CUTEGEN_ERROR_UNSUPPORTED;

  const int64_t n = cutegen::numel(inputs[0]);
  // 16-byte accesses need 16-byte aligned buffers; otherwise everything goes through relu_rest.
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  const int64_t num_tiles = aligned ? n / kTile : 0;
  if (num_tiles > 0) {
    int sms = 132;
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    // One small CTA per SM: less scheduling overhead, the grid-stride loop covers every tile.
    int64_t grid = std::min<int64_t>(num_tiles, int64_t(sms));
    relu_tiles<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(x, y, num_tiles);
  }
  if (num_tiles * kTile < n) relu_rest<<<1, kThreads, 0, stream>>>(x, y, num_tiles * kTile, n);
  return static_cast<int>(cudaGetLastError());
}
