// Example for the kernel contract: C = A @ B in fp32 at fp32 accuracy on the tensor cores (3xTF32),
// A (M,K) and B (K,N) row-major, C (M,N) row-major.
//
// TF32 keeps 10 of fp32's 23 mantissa bits, so one TF32 product is ~1e-3 relative off; 3xTF32 splits
// each operand x into big = tf32(x) and small = tf32(x - big) and sums big*big + big*small + small*big
// (small*small is below fp32's rounding) in fp32, which is as accurate as fp32 FMA. The tensor cores'
// internal adds do not round to nearest (they truncate on the GPUs measured so far), so each k-tile's
// three MMAs go into a fresh fragment that is then added to the running sum with compensated (Kahan)
// summation in ordinary fp32 arithmetic: the error of a 4096-long sum is that of a few roundings, not
// of 512 truncations that all lean the same way.
//
// Structure (from gemm_tiled.cu): a 128x128x8 CTA tile, A and B staged global -> registers -> shared
// memory by TiledCopy with the next k-tile's loads issued before this tile's math; a TiledMMA of the
// SM80 m16n8k8 TF32 atom over 2x4 warps (256 threads) reads its operands from shared memory as fp32,
// splits them in registers and issues the three MMAs. Correctness first; cp.async/TMA pipelining,
// swizzled shared memory and wgmma are the optimisations that come after.
//
// Verified by reading:
// * layouts: mA (M,K):(K,1) for row-major A; B (K,N) row-major seen as mB (N,K):(1,N); C (M,N):(N,1).
//   The TiledMMA partitions (M,K) / (N,K) / (M,N) tiles, which is what the atom computes
//   (C[m][n] += sum_k A[m][k] * B[n][k]); "TN" names register order, not memory order, and operands
//   reach registers by element-wise copies from shared memory, so any shared layout is correct.
// * splitting: big = x rounded to nearest on the 10-bit mantissa, low 13 bits cleared (exact TF32);
//   x - big is exact (Sterbenz: big is within a factor 2 of x), and is rounded the same way. The
//   fragments hold the TF32 bit patterns (tfloat32_t::bitcast), so the MMA sees exactly those values.
//   The split pairs fragment and shared tensor element by the same linear index, i.e. the same
//   logical coordinate (both have the shape partition_A/B gives).
// * K tail and bounds: only M, N multiples of 128 and K a multiple of 8 are accepted (every tile is
//   full, no predication needed) and K > 0 (the first loads read k-tile 0); other shapes return
//   CUTEGEN_ERROR_UNSUPPORTED. B's 16-byte vector
//   loads need a 16-byte aligned B (N % 4 == 0 follows from N % 128 == 0); checked.
// * shared memory reuse: the first __syncthreads of an iteration keeps the previous tile's readers
//   ahead of this tile's writers, the second makes the writes visible before the MMAs read them.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace gemm_3xtf32 {

using BM = Int<128>;
using BN = Int<128>;
using BK = Int<8>;

// As in gemm_tiled.cu: A m-major in shared memory with one column of padding, B n-major.
using SmemLayoutA = Layout<Shape<BM, BK>, Stride<_1, Int<BM::value + 1>>>;
using SmemLayoutB = Layout<Shape<BN, BK>, Stride<_1, BN>>;

// x rounded to TF32 (nearest, ties away from zero on the magnitude), as fp32 bits with the low 13
// bits clear. Inputs are finite, so the carry into the exponent is the right rounding.
__device__ __forceinline__ uint32_t tf32_bits(float x) { return (__float_as_uint(x) + 0x1000u) & 0xffffe000u; }

// big(i) = tf32(s(i)), small(i) = tf32(s(i) - big(i)), element by element.
template <class SmemTensor, class FragTensor>
__device__ __forceinline__ void split(const SmemTensor& s, FragTensor& big, FragTensor& small) {
  CUTE_UNROLL
  for (int i = 0; i < size(s); ++i) {
    const float v = s(i);
    const uint32_t hi = tf32_bits(v);
    big(i) = cutlass::tfloat32_t::bitcast(hi);
    small(i) = cutlass::tfloat32_t::bitcast(tf32_bits(v - __uint_as_float(hi)));
  }
}

template <class TiledCopyA, class TiledCopyB, class TiledMma>
__global__ void __launch_bounds__(256)
    gemm_kernel(int M, int N, int K, const float* A, const float* B, float* C, TiledCopyA copy_a, TiledCopyB copy_b,
                TiledMma mma) {
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
  Tensor tCsA = thr_mma.partition_A(sA);  // (MMA,MMA_M,MMA_K) fp32 in shared memory
  Tensor tCsB = thr_mma.partition_B(sB);  // (MMA,MMA_N,MMA_K)
  Tensor tCrA_big = thr_mma.partition_fragment_A(sA);  // same shapes, tfloat32_t in registers
  Tensor tCrA_small = thr_mma.partition_fragment_A(sA);
  Tensor tCrB_big = thr_mma.partition_fragment_B(sB);
  Tensor tCrB_small = thr_mma.partition_fragment_B(sB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);     // running sum
  Tensor tCrErr = thr_mma.make_fragment_C(tCgC);   // Kahan compensation
  Tensor tCrTile = thr_mma.make_fragment_C(tCgC);  // this k-tile's MMA results
  clear(tCrC);
  clear(tCrErr);

  const int k_tiles = size<3>(tAgA);
  copy(copy_a, tAgA(_, _, _, 0), tArA);
  copy(copy_b, tBgB(_, _, _, 0), tBrB);
  for (int k = 0; k < k_tiles; ++k) {
    __syncthreads();  // everyone is done reading the previous tile from shared memory
    copy(tArA, tAsA);
    copy(tBrB, tBsB);
    __syncthreads();
    int next = k + 1 < k_tiles ? k + 1 : k;  // the next tile's global loads overlap this tile's math
    copy(copy_a, tAgA(_, _, _, next), tArA);
    copy(copy_b, tBgB(_, _, _, next), tBrB);

    split(tCsA, tCrA_big, tCrA_small);
    split(tCsB, tCrB_big, tCrB_small);
    clear(tCrTile);
    gemm(mma, tCrA_small, tCrB_big, tCrTile);  // the small terms first
    gemm(mma, tCrA_big, tCrB_small, tCrTile);
    gemm(mma, tCrA_big, tCrB_big, tCrTile);
    CUTE_UNROLL
    for (int i = 0; i < size(tCrC); ++i) {  // tCrC += tCrTile, compensated
      const float y = tCrTile(i) - tCrErr(i);
      const float t = tCrC(i) + y;
      tCrErr(i) = (t - tCrC(i)) - y;
      tCrC(i) = t;
    }
  }
  copy(tCrC, tCgC);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace gemm_3xtf32
using namespace gemm_3xtf32;

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
  if (!aligned16(B)) return CUTEGEN_ERROR_UNSUPPORTED;
  if (M == 0 || N == 0) return CUTEGEN_OK;
  if (K == 0) return CUTEGEN_ERROR_UNSUPPORTED;

  // A: 32x8 threads, k fastest (A is K-major), one element each.
  auto copy_a = make_tiled_copy(Copy_Atom<UniversalCopy<float>, float>{},
                                Layout<Shape<_32, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _1>>{});
  // B: 32x8 threads, n fastest, four consecutive n per thread = one 16-byte load.
  auto copy_b = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                Layout<Shape<_32, _8>>{}, Layout<Shape<_4, _1>>{});
  // 2x4 warps of the m16n8k8 TF32 atom: a 32x32x8 MMA tile, repeated 4x4 over the 128x128 CTA tile.
  auto mma = make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{}, Layout<Shape<_2, _4, _1>>{});

  dim3 grid(static_cast<unsigned>(M / BM::value), static_cast<unsigned>(N / BN::value));
  gemm_kernel<<<grid, 256, 0, stream>>>(static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), A, B, C,
                                        copy_a, copy_b, mma);
  return static_cast<int>(cudaGetLastError());
}
