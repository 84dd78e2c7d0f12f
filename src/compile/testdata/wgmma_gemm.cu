// Honest kernel for the static checks: one 64x64 tile of C = A * B^T (fp16 in, fp32 out) with a
// Hopper wgmma TiledMMA reading both operands from swizzled shared memory (SS).
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/arch/mma_sm90.hpp>

using namespace cute;

namespace wgmma_example {

using Tile = Shape<_64, _64>;

template <class SmemLayoutA, class SmemLayoutB, class TiledMma>
__global__ void __launch_bounds__(128) tile_gemm(const half_t* a, const half_t* b, float* c, int m, int n,
                                                 SmemLayoutA sa_layout, SmemLayoutB sb_layout, TiledMma mma) {
  __shared__ alignas(1024) half_t smem_a[cosize_v<SmemLayoutA>];
  __shared__ alignas(1024) half_t smem_b[cosize_v<SmemLayoutB>];
  Tensor sA = make_tensor(make_smem_ptr(smem_a), sa_layout);  // (64, 64) K-major
  Tensor sB = make_tensor(make_smem_ptr(smem_b), sb_layout);
  Tensor mA = make_tensor(make_gmem_ptr(a), make_layout(make_shape(m, Int<64>{}), LayoutRight{}));
  Tensor mB = make_tensor(make_gmem_ptr(b), make_layout(make_shape(n, Int<64>{}), LayoutRight{}));
  Tensor mC = make_tensor(make_gmem_ptr(c), make_layout(make_shape(m, n), LayoutRight{}));
  Tensor gA = local_tile(mA, Tile{}, make_coord(blockIdx.x, 0));
  Tensor gB = local_tile(mB, Tile{}, make_coord(blockIdx.y, 0));
  Tensor gC = local_tile(mC, Tile{}, make_coord(blockIdx.x, blockIdx.y));
  for (int i = threadIdx.x; i < size(sA); i += blockDim.x) {
    sA(i) = gA(i);
    sB(i) = gB(i);
  }
  __syncthreads();
  auto thr = mma.get_thread_slice(threadIdx.x);
  Tensor tCsA = thr.partition_A(sA);
  Tensor tCsB = thr.partition_B(sB);
  Tensor tCgC = thr.partition_C(gC);
  Tensor tCrA = thr.make_fragment_A(tCsA);
  Tensor tCrB = thr.make_fragment_B(tCsB);
  Tensor tCrC = thr.make_fragment_C(tCgC);
  clear(tCrC);
  warpgroup_fence_operand(tCrC);
  warpgroup_arrive();
  gemm(mma, tCrA, tCrB, tCrC);
  warpgroup_commit_batch();
  warpgroup_wait<0>();
  warpgroup_fence_operand(tCrC);
  copy(tCrC, tCgC);
}

}  // namespace wgmma_example

extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t stream) {
  using namespace wgmma_example;
  if (n_in != 2 || n_out != 1 || in[0].rank != 2 || in[1].rank != 2) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  auto a = static_cast<const half_t*>(in[0].data);
  auto b = static_cast<const half_t*>(in[1].data);
  float* c = cutegen::data_as<float>(out[0], CUTEGEN_FLOAT32);
  if (in[0].dtype != CUTEGEN_FLOAT16 || in[1].dtype != CUTEGEN_FLOAT16 || !c) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  int m = static_cast<int>(in[0].shape[0]);
  int n = static_cast<int>(in[1].shape[0]);
  if (in[0].shape[1] != 64 || in[1].shape[1] != 64 || m % 64 || n % 64) return CUTEGEN_ERROR_UNSUPPORTED;
  auto sa = tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{}));
  auto sb = tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{}));
  auto mma = make_tiled_mma(SM90_64x64x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>{});
  tile_gemm<<<dim3(m / 64, n / 64), 128, 0, stream>>>(a, b, c, m, n, sa, sb, mma);
  return static_cast<int>(cudaGetLastError());
}
