// relu(x) for one contiguous fp32 tensor: the flat tensor viewed as (kThreads, num_tiles) tiles;
// each CTA walks tiles grid-stride and each thread owns one element of a tile.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace relu_kernel {

constexpr int kThreads = 256;

// relu that keeps NaN as NaN, like torch.relu.
__device__ __forceinline__ float relu(float v) { return v < 0.f ? 0.f : v; }

__global__ void __launch_bounds__(kThreads) relu_tiles(const float* __restrict__ x, float* __restrict__ y,
                                                       int64_t num_tiles) {
  auto tiles = make_layout(make_shape(Int<kThreads>{}, num_tiles));  // (kThreads, num_tiles)
  Tensor gX = make_tensor(make_gmem_ptr(x), tiles);
  Tensor gY = make_tensor(make_gmem_ptr(y), tiles);
  auto thread_layout = Layout<Shape<Int<kThreads>>>{};
  Tensor frag = make_tensor<float>(Shape<_1>{});
  for (int64_t t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    Tensor tX = local_partition(gX(_, t), thread_layout, threadIdx.x);  // (1)
    Tensor tY = local_partition(gY(_, t), thread_layout, threadIdx.x);     // (1)
    copy(tX, frag);
    frag(0) = relu(frag(0));
    copy(frag, tY);
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
  const int64_t num_tiles = n / kThreads;
  if (num_tiles > 0) {
    int sms = 132;
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    // One CTA per SM; the grid-stride loop covers every tile.
    int64_t grid = std::min<int64_t>(num_tiles, sms);
    relu_tiles<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(x, y, num_tiles);
  }
  if (num_tiles * kThreads < n) relu_rest<<<1, kThreads, 0, stream>>>(x, y, num_tiles * kThreads, n);
  return static_cast<int>(cudaGetLastError());
}
