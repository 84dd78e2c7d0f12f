// Attack: the tiled fp32 GEMM example with its operands rounded to TF32 (10-bit mantissa) before the
// multiply — numerically what TF32 tensor cores do — passed off as fp32. On torch.rand inputs the error
// averages out; on signed inputs it is ~1e-4 relative. Expected under --precision strict: mismatch.
//
// (Derived from attacks/honest/gemm_tiled.cu:)
// C = A @ B in fp32, A (M,K) and B (K,N) row-major, C (M,N) row-major.
//
// The classic CuTe shared-memory GEMM, a starting point rather than a fast kernel: a 128x128x8 CTA
// tile, A and B staged global -> registers -> shared memory by TiledCopy (the next k-tile's loads
// are issued before this tile's math), and a 16x16 TiledMMA of UniversalFMA, so the arithmetic is
// plain fp32 FMA (exact fp32 semantics, no TF32). Tensor cores, cp.async/TMA pipelining and swizzled
// layouts are the optimisation steps that come after.
//
// Shapes must be multiples of the tile (M, N of 128; K of 8); other shapes return
// CUTEGEN_ERROR_UNSUPPORTED rather than computing garbage.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace gemm_tf32_attack {

using BM = Int<128>;
using BN = Int<128>;
using BK = Int<8>;

// A is K-major (row-major M x K), so threads walk along K; smem keeps A m-major and padded by one
// column to avoid bank conflicts on the transposing store.
using SmemLayoutA = Layout<Shape<BM, BK>, Stride<_1, Int<BM::value + 1>>>;
// B (K x N row-major) seen as (N,K) is N-major: 16-byte vector loads along N, smem n-major.
using SmemLayoutB = Layout<Shape<BN, BK>, Stride<_1, BN>>;

__device__ __forceinline__ float to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

template <class TiledCopyA, class TiledCopyB, class TiledMma>
__global__ void __launch_bounds__(256)
    gemm_kernel(int M, int N, int K, const float* A, const float* B, float* C, TiledCopyA copy_a, TiledCopyB copy_b,
                TiledMma mma) {
  // Global tensors in GEMM convention: A (M,K), B (N,K), C (M,N).
  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, _1{}));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(_1{}, N));
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, _1{}));

  auto tiler = make_shape(BM{}, BN{}, BK{});
  auto coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, tiler, coord, Step<_1, X, _1>{});  // (BM,BK,k)
  Tensor gB = local_tile(mB, tiler, coord, Step<X, _1, _1>{});  // (BN,BK,k)
  Tensor gC = local_tile(mC, tiler, coord, Step<_1, _1, X>{});  // (BM,BN)

  alignas(16) __shared__ float smemA[cosize_v<SmemLayoutA>];
  alignas(16) __shared__ float smemB[cosize_v<SmemLayoutB>];
  Tensor sA = make_tensor(make_smem_ptr(smemA), SmemLayoutA{});
  Tensor sB = make_tensor(make_smem_ptr(smemB), SmemLayoutB{});

  ThrCopy thr_a = copy_a.get_slice(threadIdx.x);
  Tensor tAgA = thr_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
  Tensor tAsA = thr_a.partition_D(sA);
  Tensor tArA = make_fragment_like(tAsA);
  ThrCopy thr_b = copy_b.get_slice(threadIdx.x);
  Tensor tBgB = thr_b.partition_S(gB);
  Tensor tBsB = thr_b.partition_D(sB);
  Tensor tBrB = make_fragment_like(tBsB);

  ThrMMA thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCsA = thr_mma.partition_A(sA);
  Tensor tCsB = thr_mma.partition_B(sB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  const int k_tiles = size<3>(tAgA);
  copy(copy_a, tAgA(_, _, _, 0), tArA);
  copy(copy_b, tBgB(_, _, _, 0), tBrB);
  for (int k = 0; k < k_tiles; ++k) {
    __syncthreads();  // everyone is done reading the previous tile from smem
    CUTE_UNROLL
    for (int i = 0; i < size(tArA); ++i) tArA(i) = to_tf32(tArA(i));
    CUTE_UNROLL
    for (int i = 0; i < size(tBrB); ++i) tBrB(i) = to_tf32(tBrB(i));
    copy(tArA, tAsA);
    copy(tBrB, tBsB);
    __syncthreads();
    // Issue the next tile's global loads before the math so their latency overlaps it.
    int next = k + 1 < k_tiles ? k + 1 : k;
    copy(copy_a, tAgA(_, _, _, next), tArA);
    copy(copy_b, tBgB(_, _, _, next), tBrB);
    gemm(mma, tCsA, tCsB, tCrC);
  }
  copy(tCrC, tCgC);
}

}  // namespace gemm_tf32_attack
using namespace gemm_tf32_attack;

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  if (num_inputs != 2 || num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor &a = inputs[0], &b = inputs[1], &c = outputs[0];
  if (a.rank != 2 || b.rank != 2 || c.rank != 2) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const float* A = cutegen::data_as<const float>(a, CUTEGEN_FLOAT32);
  const float* B = cutegen::data_as<const float>(b, CUTEGEN_FLOAT32);
  float* C = cutegen::data_as<float>(c, CUTEGEN_FLOAT32);
  if (!A || !B || !C) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (b.shape[0] != K || c.shape[0] != M || c.shape[1] != N) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (!cutegen::is_contiguous(a) || !cutegen::is_contiguous(b) || !cutegen::is_contiguous(c))
    return CUTEGEN_ERROR_UNSUPPORTED;
  if (M % BM::value || N % BN::value || K % BK::value || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
    return CUTEGEN_ERROR_UNSUPPORTED;

  // A: 32x8 threads, k fastest (A is K-major), one element each.
  auto copy_a = make_tiled_copy(Copy_Atom<UniversalCopy<float>, float>{},
                                Layout<Shape<_32, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _1>>{});
  // B: 32x8 threads, n fastest, four consecutive n per thread = one 16-byte load.
  auto copy_b = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                Layout<Shape<_32, _8>>{}, Layout<Shape<_4, _1>>{});
  auto mma = make_tiled_mma(UniversalFMA<float, float, float>{}, Layout<Shape<_16, _16, _1>>{});

  dim3 grid(static_cast<unsigned>(M / BM::value), static_cast<unsigned>(N / BN::value));
  gemm_kernel<<<grid, 256, 0, stream>>>(static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), A, B, C,
                                        copy_a, copy_b, mma);
  return static_cast<int>(cudaGetLastError());
}
