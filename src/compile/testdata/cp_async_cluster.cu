// Honest kernel for the static checks and the GPU suite (problems/relu.py): y = relu(x), each 1024-element
// tile staged through shared memory with cp.async (SM80_CP_ASYNC_CACHEALWAYS through a TiledCopy),
// launched with thread-block clusters of 2 through cudaLaunchKernelExC.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/arch/copy_sm80.hpp>

using namespace cute;

namespace cp_async_example {

constexpr int kTile = 1024;

__global__ void __launch_bounds__(256) relu(const float* x, float* y, int64_t tiles) {
  __shared__ alignas(16) float smem[kTile];
  Tensor sX = make_tensor(make_smem_ptr(smem), make_layout(Int<kTile>{}));
  Tensor gX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(Int<kTile>{}, tiles)));
  Tensor gY = make_tensor(make_gmem_ptr(y), make_layout(make_shape(Int<kTile>{}, tiles)));
  auto tiled = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, float>{},
                               Layout<Shape<_256>>{}, Layout<Shape<_4>>{});
  auto thr = tiled.get_thread_slice(threadIdx.x);
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    Tensor tG = thr.partition_S(gX(_, t));
    Tensor tS = thr.partition_D(sX);
    copy(tiled, tG, tS);
    cp_async_fence();
    cp_async_wait<0>();
    __syncthreads();
    Tensor tY = thr.partition_D(gY(_, t));
    Tensor tR = thr.partition_S(sX);
    for (int i = 0; i < size(tR); ++i) {
      float v = tR(i);
      tY(i) = v < 0.f ? 0.f : v;  // keeps NaN, like torch.relu
    }
    __syncthreads();
  }
}

}  // namespace cp_async_example

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t stream) {
  if (n_in != 1 || n_out != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* x = cutegen::data_as<const float>(in[0], CUTEGEN_FLOAT32);
  float* y = cutegen::data_as<float>(out[0], CUTEGEN_FLOAT32);
  if (!x || !y || cutegen::numel(in[0]) != cutegen::numel(out[0])) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(in[0]) || !cutegen::is_contiguous(out[0])) return CUTEGEN_ERROR_UNSUPPORTED;
  int64_t n = cutegen::numel(in[0]);
  if (n % (2 * cp_async_example::kTile) != 0) return CUTEGEN_ERROR_UNSUPPORTED;
  int64_t tiles = n / cp_async_example::kTile;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(std::min<int64_t>(tiles, 1024)) & ~1u);
  config.blockDim = dim3(256);
  config.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  void* args[] = {&x, &y, &tiles};
  cudaError_t err = cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&cp_async_example::relu), args);
  return static_cast<int>(err != cudaSuccess ? err : cudaGetLastError());
}
