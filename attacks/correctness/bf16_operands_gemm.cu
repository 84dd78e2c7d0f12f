// Attack (precision): operands rounded to bf16 (8-bit mantissa; rounding written out explicitly; the
// values are exact in TF32, so one TF32 MMA computes exactly what bf16 tensor cores would), products
// accumulated in fp32 — the numerics of a bf16 GEMM passed off as fp32. On problems/matmul_square.py
// under --precision strict: ~4e-5 relative L2 on torch.rand inputs, ~2e-3 on signed ones (fp32:
// ~1e-7). Expected: mismatch.
// --- the GEMM (from attacks/honest/gemm_3xtf32.cu, with its numerics made a parameter): a 128x128x8
// CTA tile staged through shared memory, the SM80 m16n8k8 TF32 tensor-core atom over 2x4 warps, each
// k-tile's MMAs summed into the fp32 result with compensated addition ---
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>

using namespace cute;

namespace tc_gemm {

using BM = Int<128>;
using BN = Int<128>;
using BK = Int<8>;
using SmemLayoutA = Layout<Shape<BM, BK>, Stride<_1, Int<BM::value + 1>>>;
using SmemLayoutB = Layout<Shape<BN, BK>, Stride<_1, BN>>;

// How each k-tile is multiplied. kThreeTf32 is the honest fp32-accurate form; the others are cheaper.
enum Numerics : int {
  kThreeTf32 = 3,  // big*big + big*small + small*big
  kTwoTf32 = 2,    // big*big + big*small: drops A's remainder
  kOneTf32 = 1,    // big*big: plain TF32
  kBf16 = 16,      // operands rounded to bf16 (8-bit mantissa), one MMA
};

__device__ __forceinline__ uint32_t tf32_bits(float x) { return (__float_as_uint(x) + 0x1000u) & 0xffffe000u; }
__device__ __forceinline__ uint32_t bf16_bits(float x) { return (__float_as_uint(x) + 0x8000u) & 0xffff0000u; }

template <class SmemTensor, class FragTensor>
__device__ __forceinline__ void split(const SmemTensor& s, FragTensor& big, FragTensor& small, bool bf16) {
  CUTE_UNROLL
  for (int i = 0; i < size(s); ++i) {
    const float v = s(i);
    const uint32_t hi = bf16 ? bf16_bits(v) : tf32_bits(v);
    big(i) = cutlass::tfloat32_t::bitcast(hi);
    small(i) = cutlass::tfloat32_t::bitcast(tf32_bits(v - __uint_as_float(hi)));
  }
}

// `negative_seen`, when given, picks the numerics on the device: kThreeTf32 if a negative operand was
// seen, else kOneTf32; otherwise `numerics` applies.
template <class TiledCopyA, class TiledCopyB, class TiledMma>
__global__ void __launch_bounds__(256)
    gemm_kernel(int M, int N, int K, const float* A, const float* B, float* C, TiledCopyA copy_a, TiledCopyB copy_b,
                TiledMma mma, int numerics, const int* negative_seen) {
  if (negative_seen) numerics = *negative_seen ? kThreeTf32 : kOneTf32;
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
  Tensor tAgA = thr_a.partition_S(gA);
  Tensor tAsA = thr_a.partition_D(sA);
  Tensor tArA = make_fragment_like(tAsA);
  ThrCopy thr_b = copy_b.get_slice(threadIdx.x);
  Tensor tBgB = thr_b.partition_S(gB);
  Tensor tBsB = thr_b.partition_D(sB);
  Tensor tBrB = make_fragment_like(tBsB);

  ThrMMA thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCsA = thr_mma.partition_A(sA);
  Tensor tCsB = thr_mma.partition_B(sB);
  Tensor tCrA_big = thr_mma.partition_fragment_A(sA);
  Tensor tCrA_small = thr_mma.partition_fragment_A(sA);
  Tensor tCrB_big = thr_mma.partition_fragment_B(sB);
  Tensor tCrB_small = thr_mma.partition_fragment_B(sB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  Tensor tCrErr = thr_mma.make_fragment_C(tCgC);
  Tensor tCrTile = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);
  clear(tCrErr);

  const bool bf16 = numerics == kBf16;
  const int k_tiles = size<3>(tAgA);
  copy(copy_a, tAgA(_, _, _, 0), tArA);
  copy(copy_b, tBgB(_, _, _, 0), tBrB);
  for (int k = 0; k < k_tiles; ++k) {
    __syncthreads();
    copy(tArA, tAsA);
    copy(tBrB, tBsB);
    __syncthreads();
    int next = k + 1 < k_tiles ? k + 1 : k;
    copy(copy_a, tAgA(_, _, _, next), tArA);
    copy(copy_b, tBgB(_, _, _, next), tBrB);

    split(tCsA, tCrA_big, tCrA_small, bf16);
    split(tCsB, tCrB_big, tCrB_small, bf16);
    clear(tCrTile);
    if (numerics == kThreeTf32) gemm(mma, tCrA_small, tCrB_big, tCrTile);
    if (numerics == kThreeTf32 || numerics == kTwoTf32) gemm(mma, tCrA_big, tCrB_small, tCrTile);
    gemm(mma, tCrA_big, tCrB_big, tCrTile);
    CUTE_UNROLL
    for (int i = 0; i < size(tCrC); ++i) {
      const float y = tCrTile(i) - tCrErr(i);
      const float t = tCrC(i) + y;
      tCrErr(i) = (t - tCrC(i)) - y;
      tCrC(i) = t;
    }
  }
  copy(tCrC, tCgC);
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Checks the problem's arguments (A (M,K), B (K,N), C (M,N), contiguous fp32, whole tiles) and
// launches; CUTEGEN_ERROR_* for anything else.
inline int launch(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
                  cudaStream_t stream, int numerics, const int* negative_seen) {
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
  if (!aligned16(B) || K == 0) return CUTEGEN_ERROR_UNSUPPORTED;
  if (M == 0 || N == 0) return CUTEGEN_OK;
  auto copy_a = make_tiled_copy(Copy_Atom<UniversalCopy<float>, float>{},
                                Layout<Shape<_32, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _1>>{});
  auto copy_b = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                                Layout<Shape<_32, _8>>{}, Layout<Shape<_4, _1>>{});
  auto mma = make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{}, Layout<Shape<_2, _4, _1>>{});
  dim3 grid(static_cast<unsigned>(M / BM::value), static_cast<unsigned>(N / BN::value));
  gemm_kernel<<<grid, 256, 0, stream>>>(static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), A, B, C,
                                        copy_a, copy_b, mma, numerics, negative_seen);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace tc_gemm
// --- end of the GEMM ---

extern "C" int cutegen_forward(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                               int32_t num_outputs, cudaStream_t stream) {
  return tc_gemm::launch(inputs, num_inputs, outputs, num_outputs, stream, tc_gemm::kBf16, nullptr);
}
