// Library kernel: C = op(A) @ op(B) for fp32 matrices on Hopper's tensor cores in TF32, for the `tf32`
// precision policy (`cutegen eval problem.py kernel.cu --precision tf32`): 1_Square_matrix_multiplication_
// (4096^3, problems/matmul_square.py) and the transposed variants, KernelBench 16-18
// (problems/matmul_trans_{a,b,both}.py: the shapes say which operand is transposed).
//
// The idiom, and why it is fast:
// * The main GEMM is CUTLASS 3.x's SM90 kernel, which is CuTe code: TMA loads whole tiles of A and B
//   into 128-byte-swizzled shared memory (no bank conflicts, no address math in the loop), a producer
//   warp keeps a multi-stage ring of those tiles full (mbarrier pipeline), and two consumer warpgroups
//   ("cooperative") or one per tile ("pingpong") issue asynchronous `wgmma` instructions that read both
//   operands straight from shared memory. A persistent tile scheduler keeps one CTA per SM and walks
//   the output tiles in swizzled order so neighbouring CTAs share A and B tiles in L2; thread-block
//   clusters multicast a tile to the CTAs of a cluster (one L2 read feeds two SMs).
// * `wgmma` reads TF32 operands only K-major (16-bit types can be transposed, 32-bit ones cannot). A
//   row-major B of A @ B is N-major, so a pre-pass writes it K-major (B^T, 64 MiB for 4096^2) into the
//   harness's workspace (contract v2), rounding to TF32 on the way. That costs ~10% of the GEMM's time
//   on 4096^3; CUTLASS's alternative (knob GT_B_INKERNEL: B read in place, operands swapped so that
//   it reaches wgmma from registers, transposed on its way out of shared memory) costs every k-step a
//   little instead — which wins is for `cutegen tune` to measure. An operand already K-major (A of
//   A @ B, B of A @ B.T) is read in place — no copy.
// * Rounding: the pre-pass rounds to nearest; an operand read in place is at worst truncated (the
//   tensor core ignores the low 13 bits). Truncation biases each product by about -3.4e-4 (relative) on
//   same-sign data — within the tf32 policy's 2e-3 floor with a margin of ~6x; GT_ROUND_A=1 rounds A
//   in the pre-pass too (unbiased, costs another pass over A).
// * Zero allocations: CUTLASS's own workspace (0 bytes for this scheduler) and the packed operands
//   live in the one workspace the harness hands over; TMA descriptors are built on the host
//   (cuTensorMapEncodeTiled) per call, the cluster launch is our own cudaLaunchKernelExC
//   (CUTLASS's launcher would import std::cout).
//
// Shapes: any M, N, K >= 1 and any strides (the pre-pass reads whatever strides it is given; TMA masks
// the M/N edges; K is padded with zeros to a multiple of 4 in the pre-pass). An operand is read in
// place only when it is K-major with a 16-byte aligned base and row stride; otherwise it is packed.

// CUTLASS's device code asserts; an assert is a call to __assertfail inside the mainloop, and ptxas then
// serialises every wgmma (warning C7510: "wgmma pipeline crossing function boundary"). Before any header.
#ifndef NDEBUG
#define NDEBUG
#endif

// The output tile of one CTA (M x N) and the cluster of CTAs sharing loads through TMA multicast.
// cutegen:knob GT_TILE_M in {64, 128, 256}
#ifndef GT_TILE_M
#define GT_TILE_M 128
#endif
// cutegen:knob GT_TILE_N in {64, 128, 256}
#ifndef GT_TILE_N
#define GT_TILE_N 256
#endif
// cutegen:knob GT_CLUSTER_M in {1, 2}
#ifndef GT_CLUSTER_M
#define GT_CLUSTER_M 2
#endif
// cutegen:knob GT_CLUSTER_N in {1, 2}
#ifndef GT_CLUSTER_N
#define GT_CLUSTER_N 1
#endif
// 0: cooperative (two consumer warpgroups split one tile), 1: pingpong (each warpgroup its own tile,
// one's epilogue overlaps the other's mainloop).
// cutegen:knob GT_PINGPONG in {0, 1}
#ifndef GT_PINGPONG
#define GT_PINGPONG 0
#endif
// Pipeline stages of the shared-memory ring; 0: as many as fit.
// cutegen:knob GT_STAGES in {0, 3, 4, 5, 6}
#ifndef GT_STAGES
#define GT_STAGES 0
#endif
// Tile-order swizzle of the persistent scheduler (L2 reuse between neighbouring CTAs).
// cutegen:knob GT_SWIZZLE in {1, 2, 4, 8}
#ifndef GT_SWIZZLE
#define GT_SWIZZLE 1
#endif
// 1: round A to TF32 in the pre-pass even when it could be read in place (see the header comment).
// cutegen:knob GT_ROUND_A in {0, 1}
#ifndef GT_ROUND_A
#define GT_ROUND_A 0
#endif
// 1: read an N-major B in place and let CUTLASS's register-sourced mainloop transpose it (the operand
// goes shared memory -> registers -> wgmma, operands swapped) instead of the transposing pre-pass.
// Only for N-major B (A @ B, A.T @ B) with K % 4 == 0; other shapes are refused with this value.
// cutegen:knob GT_B_INKERNEL in {0, 1}
#ifndef GT_B_INKERNEL
#define GT_B_INKERNEL 0
#endif
// How the output tile leaves the registers. 1: each thread stores its accumulators straight into D, two
// neighbours of a row per 8-byte store, predicated in partial tiles. 0: CUTLASS's TMA epilogue (through shared
// memory, then TMA stores). 1's device compile takes about 40% less: the TMA epilogue collective is most of what
// cicc's front end spends instantiating this kernel (benchmarks/results.md, "Compile times"). 0 ran 1.8% faster
// on 4096^3.
// cutegen:knob GT_STORE in {0, 1}
#ifndef GT_STORE
#define GT_STORE 1
#endif
// Accumulators per thread: cooperative splits the tile over 256 threads, pingpong gives it to 128.
// cutegen:require GT_PINGPONG == 1 || GT_TILE_M >= 128
// cutegen:require GT_TILE_M * GT_TILE_N <= 32768 / (1 + GT_PINGPONG)
// cutegen:require GT_STAGES == 0 || GT_STAGES * (GT_TILE_M + GT_TILE_N) * 128 <= 200000
// CUTLASS's register-sourced builder sizes its stages itself (StageCount<N> does not fit it).
// cutegen:require GT_B_INKERNEL == 0 || GT_STAGES == 0

// The headers, after the knobs: GT_STORE chooses the epilogue's.
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#if GT_STORE == 0  // the TMA epilogue's builder, which the register store need not parse (~0.4 s of cicc)
#include <cutlass/epilogue/collective/collective_builder.hpp>
#endif
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

namespace gemm_sm90_tf32 {
using namespace cute;

// What forward() computes: A @ B with A (M, K), B (K, N), or with A.T (A arrives (K, M)) or B.T (B
// arrives (N, K)), as KernelBench 16-18 do. The reading comes from the shapes of A, B and C when only
// one of the four fits them (16-18 are not square); where several fit (square matrices) these say which.
// Only the strides the kernel reads change: a transposed operand costs nothing extra.
constexpr bool kTransA = false;
constexpr bool kTransB = false;

// Whether C = op(A) @ op(B) fits the shapes, op = transpose where ta / tb.
bool fits(const cutegen_tensor& a, const cutegen_tensor& b, const cutegen_tensor& c, bool ta, bool tb) {
  const int64_t M = a.shape[ta ? 1 : 0], K = a.shape[ta ? 0 : 1];
  const int64_t Kb = b.shape[tb ? 1 : 0], N = b.shape[tb ? 0 : 1];
  return K == Kb && c.shape[0] == M && c.shape[1] == N;
}

constexpr int kPackTile = 32;  // the pre-pass's (rows x k) tile

// ---------------------------------------------------------------------------------------------
// Pre-pass: out(r, k) = tf32_round(x(r, k)) for k < K, 0 for K <= k < Kp; out is (R, Kp) K-major.
// One 32x32 tile per CTA through padded shared memory, so that both the read (along whichever mode
// of x is contiguous) and the write (along k) are coalesced.

// Round-to-nearest onto TF32's 10-bit mantissa, low 13 bits cleared (finite inputs).
__device__ __forceinline__ float tf32_round(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

template <bool kKContiguous>
__global__ void __launch_bounds__(256) pack_kernel(const float* x, int R, int K, int64_t stride_r, int64_t stride_k,
                                                   float* out, int Kp) {
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(R, K), make_stride(stride_r, stride_k));
  Tensor mO = make_tensor(make_gmem_ptr(out), make_shape(R, Kp), make_stride(int64_t(Kp), _1{}));
  __shared__ float smem[kPackTile * (kPackTile + 1)];
  Tensor sT = make_tensor(make_smem_ptr(smem), Layout<Shape<Int<kPackTile>, Int<kPackTile>>,
                                                      Stride<Int<kPackTile + 1>, _1>>{});
  const int r0 = blockIdx.x * kPackTile, k0 = blockIdx.y * kPackTile;
  const int lane = threadIdx.x % 32, row = threadIdx.x / 32;
  CUTE_UNROLL
  for (int i = 0; i < kPackTile / 8; ++i) {
    const int rr = kKContiguous ? row + 8 * i : lane;  // the warp walks x's contiguous mode
    const int kk = kKContiguous ? lane : row + 8 * i;
    const int r = r0 + rr, k = k0 + kk;
    sT(rr, kk) = (r < R && k < K) ? mX(r, k) : 0.0f;
  }
  __syncthreads();
  CUTE_UNROLL
  for (int i = 0; i < kPackTile / 8; ++i) {
    const int rr = row + 8 * i, r = r0 + rr;
    if (r < R && k0 + lane < Kp) mO(r, k0 + lane) = tf32_round(sT(rr, lane));
  }
}

// ---------------------------------------------------------------------------------------------
// The main GEMM: D (M, N) row-major = A (M, K) K-major x B (N, K) K-major, fp32 in, TF32 MMA, fp32
// accumulate and out.
using TileShape = Shape<Int<GT_TILE_M>, Int<GT_TILE_N>, _32>;  // 32 fp32 of K = one 128-byte swizzle row
using ClusterShape = Shape<Int<GT_CLUSTER_M>, Int<GT_CLUSTER_N>, _1>;
using MainloopSchedule = cute::conditional_t<GT_PINGPONG, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                             cutlass::gemm::KernelTmaWarpSpecializedCooperative>;
using EpilogueSchedule = cute::conditional_t<GT_PINGPONG, cutlass::epilogue::TmaWarpSpecialized,
                                             cutlass::epilogue::TmaWarpSpecializedCooperative>;

#if GT_STORE == 0
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    void, cutlass::layout::RowMajor, 4,  // no C source: D = A x B
    float, cutlass::layout::RowMajor, 4, EpilogueSchedule>::CollectiveOp;
#else
// GT_STORE 1: an operator-style epilogue, which CUTLASS's Sm90TmaWarpSpecializedAdapter runs in the consumer
// warpgroups right after each tile's mainloop. The wgmma accumulator fragment holds, per thread, pairs of
// neighbouring columns of a row, so a whole tile is stored as 8-byte vectors when D's rows and base allow it
// (`vectors`); otherwise -- a partial tile at M's or N's end, or an odd N -- element by element, each predicated
// on its coordinate.
struct DirectStore {
  using ElementC = void;  // no C source: D = A x B
  using ElementD = float;
  using ElementAccumulator = float;
  using StrideC = cute::Stride<int64_t, cute::_1, int64_t>;  // (row, column, batch) of D, row-major
  using StrideD = StrideC;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  using ThreadEpilogueOp = void;  // GemmUniversalAdapter names it
  struct SharedStorage {};        // nothing: the mainloop keeps all of shared memory for its stages
  using TensorStorage = SharedStorage;
  struct Arguments {
    float* ptr_D = nullptr;
    StrideD dD{};
    bool vectors = false;  // D's row stride even and its base 8-byte aligned
  };
  using Params = Arguments;
  template <class Shape>
  static constexpr Params to_underlying_arguments(Shape const&, Arguments const& args, void*) { return args; }
  template <class Shape>
  static size_t get_workspace_size(Shape const&, Arguments const&) { return 0; }
  template <class Shape>
  static cutlass::Status initialize_workspace(Shape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  template <class Shape>
  static bool can_implement(Shape const&, Arguments const&) { return true; }  // any shape the mainloop takes

  CUTLASS_HOST_DEVICE DirectStore(Params const& p) : params(p) {}
  CUTLASS_DEVICE bool is_source_needed() { return false; }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl, cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK residue_mnk, int thread_idx, char*) {
    auto [M, N, K, L] = problem_shape_mnkl;
    auto [m, n, k, l] = blk_coord_mnkl;
    Tensor mD = make_tensor(make_gmem_ptr(params.ptr_D), make_shape(M, N, L), params.dD);
    Tensor gD = local_tile(mD, take<0, 2>(blk_shape_mnk), make_coord(m, n, l));  // this tile of D
    auto thread_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor tCgD = thread_mma.partition_C(gD);  // this thread's elements, laid out as `accumulators`
    const int rows_left = int(get<0>(residue_mnk)), cols_left = int(get<1>(residue_mnk));
    const bool whole = rows_left >= int(size<0>(blk_shape_mnk)) && cols_left >= int(size<1>(blk_shape_mnk));
    if (whole && params.vectors) {
      copy(AutoVectorizingCopyWithAssumedAlignment<64>{}, accumulators, tCgD);  // the column pairs, 8 bytes each
    } else {  // a partial tile, or D's rows not 8-byte aligned (odd N)
      Tensor tCcD = thread_mma.partition_C(make_identity_tensor(take<0, 2>(blk_shape_mnk)));  // (row, col) in the tile
      CUTE_UNROLL
      for (int i = 0; i < size(accumulators); ++i)
        if (int(get<0>(tCcD(i))) < rows_left && int(get<1>(tCcD(i))) < cols_left) tCgD(i) = accumulators(i);
    }
  }

  Params params;
};
using CollectiveEpilogue = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<DirectStore>;
#endif

using StageCount = cute::conditional_t<
    GT_STAGES == 0,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
        sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::collective::StageCount<(GT_STAGES == 0 ? 2 : GT_STAGES)>>;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    float, cutlass::layout::RowMajor, 4,     // A (M, K), K-major
    // B as (N, K): K-major (ColumnMajor), or N-major read in place with GT_B_INKERNEL
    float, cute::conditional_t<GT_B_INKERNEL, cutlass::layout::RowMajor, cutlass::layout::ColumnMajor>, 4,
    float, TileShape, ClusterShape, StageCount, MainloopSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

// ---------------------------------------------------------------------------------------------
// The GEMM kernel launched as a cluster through cudaLaunchKernelExC. Gemm::run() would do the same
// through CUTLASS's ClusterLauncher, whose error paths print to std::cout: a forbidden import.
template <class Gemm>
cudaError_t launch_cluster(const Gemm& gemm, cudaStream_t stream) {
  using Kernel = typename Gemm::GemmKernel;
  typename Kernel::Params params = gemm.params();
  cudaLaunchConfig_t config{};
  config.gridDim = Kernel::get_grid_shape(params);
  config.blockDim = Kernel::get_block_shape();
  config.dynamicSmemBytes = Kernel::SharedStorageSize;  // initialize() raised the kernel's limit to this
  config.stream = stream;
  cudaLaunchAttribute cluster[1];
  cluster[0].id = cudaLaunchAttributeClusterDimension;
  cluster[0].val.clusterDim.x = size<0>(ClusterShape{});
  cluster[0].val.clusterDim.y = size<1>(ClusterShape{});
  cluster[0].val.clusterDim.z = 1;
  config.attrs = cluster;
  config.numAttrs = 1;
  void* kernel_args[] = {&params};
  return cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&cutlass::device_kernel<Kernel>), kernel_args);
}

// ---------------------------------------------------------------------------------------------
// Host side: one plan, computed the same way for the size query and the call.

struct Operand {
  const float* data;
  int rows;            // M for A, N for B
  int64_t stride_row;  // elements between rows (the M or N mode)
  int64_t stride_k;    // elements between consecutive k
  bool packed;         // read from the workspace's packed copy instead of in place
  size_t offset;       // of the packed copy in the workspace
};

struct Plan {
  int status = CUTEGEN_OK;
  int M = 0, N = 0, K = 0, Kp = 0;
  Operand a{}, b{};
  size_t cutlass_offset = 0, bytes = 0;
  float* d = nullptr;
};

constexpr size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// With data-less descriptors (the size query) pointers are not known: decide on strides only, and
// the call checks the alignment of the real pointers against what the size query assumed.
bool in_place_ok(const float* p, int64_t stride_row, int64_t stride_k, bool pointer_known) {
  return stride_k == 1 && stride_row % 4 == 0 && (!pointer_known || aligned16(p));
}

Gemm::Arguments arguments(const Plan& p, const float* a, const float* b) {
  Gemm::Arguments args{};
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = make_shape(p.M, p.N, p.Kp, 1);
  args.mainloop.ptr_A = a;
  args.mainloop.dA = make_stride(p.a.packed ? int64_t(p.Kp) : p.a.stride_row, _1{}, int64_t(0));
  args.mainloop.ptr_B = b;
#if GT_B_INKERNEL
  args.mainloop.dB = make_stride(_1{}, p.b.stride_k, int64_t(0));  // (N, K, L), N-major, in place
#else
  args.mainloop.dB = make_stride(p.b.packed ? int64_t(p.Kp) : p.b.stride_row, _1{}, int64_t(0));
#endif
#if GT_STORE == 0
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = make_stride(int64_t(p.N), _1{}, int64_t(0));
#else
  args.epilogue.vectors = p.N % 2 == 0 && reinterpret_cast<uintptr_t>(p.d) % 8 == 0;
#endif
  args.epilogue.ptr_D = p.d;
  args.epilogue.dD = make_stride(int64_t(p.N), _1{}, int64_t(0));
  args.scheduler.max_swizzle_size = GT_SWIZZLE;
  return args;
}

Plan make_plan(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
               bool pointers_known) {
  Plan p;
  if (num_inputs != 2 || num_outputs != 1) return p.status = CUTEGEN_ERROR_BAD_ARGUMENTS, p;
  const cutegen_tensor &a = inputs[0], &b = inputs[1], &c = outputs[0];
  if (a.rank != 2 || b.rank != 2 || c.rank != 2 || a.dtype != CUTEGEN_FLOAT32 || b.dtype != CUTEGEN_FLOAT32 ||
      c.dtype != CUTEGEN_FLOAT32)
    return p.status = CUTEGEN_ERROR_BAD_ARGUMENTS, p;
  // kTransA / kTransB when they fit the shapes, else the one reading that does.
  bool ta = kTransA, tb = kTransB;
  if (!fits(a, b, c, ta, tb)) {
    int readings = 0;
    for (int t = 0; t < 4; ++t)
      if (fits(a, b, c, t & 1, t & 2) && readings++ == 0) ta = t & 1, tb = t & 2;
    if (readings != 1) return p.status = CUTEGEN_ERROR_BAD_ARGUMENTS, p;
  }
  // (row, k) modes of A and (n, k) modes of B, in the descriptors' dimension numbers.
  const int a_row = ta ? 1 : 0, a_k = 1 - a_row;
  const int b_row = tb ? 0 : 1, b_k = 1 - b_row;
  const int64_t M = a.shape[a_row], K = a.shape[a_k], N = b.shape[b_row];
  if (M < 1 || N < 1 || K < 1 || M > INT32_MAX / 2 || N > INT32_MAX / 2 || K > INT32_MAX / 2)
    return p.status = CUTEGEN_ERROR_UNSUPPORTED, p;
  // D row-major with a 16-byte aligned row stride: what GT_STORE 0's TMA store needs. GT_STORE 1 would store any N,
  // but keeps these limits, the ones the TF32 seed's route checks (judged on the GPU only with them).
  if (!cutegen::is_contiguous(c) || N % 4 != 0 || (pointers_known && !aligned16(c.data)))
    return p.status = CUTEGEN_ERROR_UNSUPPORTED, p;
  p.M = static_cast<int>(M), p.N = static_cast<int>(N), p.K = static_cast<int>(K);
  p.d = static_cast<float*>(c.data);
  p.a = {static_cast<const float*>(a.data), p.M, a.stride[a_row], a.stride[a_k], false, 0};
  p.b = {static_cast<const float*>(b.data), p.N, b.stride[b_row], b.stride[b_k], false, 0};
  p.a.packed = GT_ROUND_A || !in_place_ok(p.a.data, p.a.stride_row, p.a.stride_k, pointers_known);
  p.b.packed = !in_place_ok(p.b.data, p.b.stride_row, p.b.stride_k, pointers_known);
  // The GEMM's K is padded to a multiple of 4 (TMA's 16-byte row stride); the pre-pass writes the
  // padding as zeros. An operand read in place has no padding, so with K % 4 != 0 both are packed.
  p.Kp = static_cast<int>(round_up(p.K, 4));
  if (p.Kp != p.K) p.a.packed = p.b.packed = true;
#if GT_B_INKERNEL
  // B must be N-major in place: no pre-pass writes that layout.
  if (p.Kp != p.K || p.b.stride_row != 1 || p.b.stride_k % 4 != 0 || (pointers_known && !aligned16(p.b.data)))
    return p.status = CUTEGEN_ERROR_UNSUPPORTED, p;
  p.b.packed = false;
#endif
  size_t at = 0;
  if (p.a.packed) p.a.offset = at, at += round_up(size_t(p.M) * p.Kp * sizeof(float), 256);
  if (p.b.packed) p.b.offset = at, at += round_up(size_t(p.N) * p.Kp * sizeof(float), 256);
  p.cutlass_offset = at;
  Gemm::Arguments args = arguments(p, nullptr, nullptr);
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return p.status = CUTEGEN_ERROR_UNSUPPORTED, p;
  p.bytes = round_up(at + Gemm::get_workspace_size(args), 256);
  if (p.bytes == 0) p.bytes = 256;  // the contract asks for a non-zero size
  return p;
}

void launch_pack(const Operand& o, int K, int Kp, float* out, cudaStream_t stream) {
  dim3 grid((o.rows + kPackTile - 1) / kPackTile, (Kp + kPackTile - 1) / kPackTile);
  if (o.stride_k == 1)
    pack_kernel<true><<<grid, 256, 0, stream>>>(o.data, o.rows, K, o.stride_row, o.stride_k, out, Kp);
  else
    pack_kernel<false><<<grid, 256, 0, stream>>>(o.data, o.rows, K, o.stride_row, o.stride_k, out, Kp);
}

}  // namespace gemm_sm90_tf32
using namespace gemm_sm90_tf32;

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* inputs, int32_t num_inputs,
                                          const cutegen_tensor* outputs, int32_t num_outputs) {
  Plan p = make_plan(inputs, num_inputs, outputs, num_outputs, /*pointers_known=*/false);
  return p.status == CUTEGEN_OK ? p.bytes : 0;  // 0: shapes this kernel was not written for
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                                  int32_t num_outputs, void* workspace, size_t workspace_bytes,
                                  cudaStream_t stream) {
  Plan p = make_plan(inputs, num_inputs, outputs, num_outputs, /*pointers_known=*/true);
  if (p.status != CUTEGEN_OK) return p.status;
  // The size query could not see the pointers; a misaligned pointer now would need a packing the
  // workspace was not sized for.
  if (p.bytes > workspace_bytes) return CUTEGEN_ERROR_UNSUPPORTED;
  char* ws = static_cast<char*>(workspace);
  const float* a = p.a.data;
  const float* b = p.b.data;
  if (p.a.packed) {
    float* out = reinterpret_cast<float*>(ws + p.a.offset);
    launch_pack(p.a, p.K, p.Kp, out, stream);
    a = out;
  }
  if (p.b.packed) {
    float* out = reinterpret_cast<float*>(ws + p.b.offset);
    launch_pack(p.b, p.K, p.Kp, out, stream);
    b = out;
  }
  Gemm::Arguments args = arguments(p, a, b);
  args.hw_info.device_id = 0;
  if (cudaGetDevice(&args.hw_info.device_id) != cudaSuccess) return static_cast<int>(cudaGetLastError());
  args.hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(args.hw_info.device_id);
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return CUTEGEN_ERROR_UNSUPPORTED;
  if (gemm.initialize(args, ws + p.cutlass_offset, stream) != cutlass::Status::kSuccess) {
    const cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? static_cast<int>(e) : CUTEGEN_ERROR_UNSUPPORTED;
  }
  if (const cudaError_t e = launch_cluster(gemm, stream); e != cudaSuccess) return static_cast<int>(e);
  return static_cast<int>(cudaGetLastError());
}
