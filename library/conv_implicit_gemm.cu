// Library kernel: a dense or grouped convolution of fp32 NC(D)(H)W tensors at fp32 accuracy on the tensor
// cores (3xTF32) -- forward (nn.Conv1d/2d/3d) and transposed (nn.ConvTranspose1d/2d/3d), with stride,
// padding, dilation, groups, output_padding (read from the output's shape), an optional bias and an optional
// pointwise epilogue. Its own problem is problems/conv2d_3x3.py; the seed (src/seed, the convolution routes)
// sets `kSpec` below from the traced module -- and, for a convolution followed by pointwise ops, where its
// inputs are and the epilogue -- and uses the file as it is otherwise.
//
// The idea: a convolution is a GEMM whose operands are never materialised ("implicit GEMM"):
//   out(m, j) = sum_k A(m, k) B(k, j),  m = an output position of one image (n, od, oh, ow),
//   j = an output channel of one group, k = (kernel tap, input channel of the group),
//   A(m, k) = the input value that tap k sees from position m (zero in the padding), B = the weight.
// Each CTA gathers a 128 x 32 tile of A straight from the NCHW input into shared memory with 4-byte
// cp.async (zero-filled where the tap falls in the padding: `src-size` 0), while a 32 x 64 tile of the
// weight arrives with 16-byte cp.async; a 3-stage pipeline keeps two tiles in flight during the math.
//
// Transposed convolutions as forward ones, without wasted taps: output o of a transposed convolution
// reads input i = (o + p - k d) / s only where that division is exact, so for stride s most taps of an
// output are empty. Outputs are grouped by phase r = o mod s (per dimension); within a phase the valid
// taps are the same for every output, and with o = r + s q the input is i = q + e_k, e_k = (r + p - k d)/s:
// a stride-1 forward convolution over q with its own short tap list. So each phase is one implicit GEMM
// with K = (valid taps) x channels (blockIdx.z runs over groups x phases); KernelBench 81 (stride 5,
// dilation 2, 3x3) has at most one tap per phase instead of nine mostly-empty ones. A forward convolution
// is the one-phase case with i = q s + e_k, e_k = k d - p.
//
// Per call, before the GEMM, two small kernels write into the workspace (contract v2): the tap table of
// every phase (input-channel offset and the per-dimension input offsets e, or "empty" in the K padding)
// and the weight re-laid as B[group][phase][k][channel] (K rows of the output channels, 16-byte rows for
// cp.async), already split into TF32 big and small parts. The gather reads one table entry per k row
// (the same entry for the whole CTA: a broadcast from L1) and needs one bounds test per element.
//
// 3xTF32: TF32 keeps 10 of fp32's 23 mantissa bits. x = big + small with big = tf32(x),
// small = tf32(x - big) (|x - big - small| <= 2^-22 |x|); a*b ~ big_a big_b + big_a small_b + small_a big_b,
// three m16n8k8 TF32 MMAs (CuTe's SM80 atom, which Hopper runs) whose products are exact in fp32. The
// tensor cores' adds inside an MMA truncate, so each k-tile's 12 MMAs (32 of K, 96 products) go into a
// fresh fragment that is added to the running sum with an ordinary round-to-nearest fp32 add: truncation
// acts only inside 96-term chunks (the promotion of library/gemm_sm90_3xtf32.cu, whose CPU error
// model, benchmarks/gemm_3xtf32_error_model.py, puts 64-term chunks at 3.8e-7 rel-L2 for K' = 12288).
// The weight is split once per call in the workspace; the input is split in registers as it leaves
// shared memory (it is read once per output-channel tile).
//
// Verified by reading:
// * Coverage: grid.x tiles the largest phase's M; a CTA past its phase's M returns before touching shared
//   memory (no barrier is skipped by part of a CTA). grid.y tiles the group's output channels, grid.z runs
//   over groups x phases. Every output element (n, c, o) lies in exactly one phase r = o mod s and is
//   written once, by the thread holding (m, j); a phase without taps (possible for stride > dilation x
//   kernel) still writes its outputs (bias or 0): its loop runs zero k-tiles.
// * K padding: k beyond the phase's taps x channels has an "empty" table entry (zero A) and zero weights.
// * Shared memory: stage s of k-tile t is rewritten by the loads of tile t + STAGES - 1, issued after the
//   barrier that follows every thread's math on tile t - 1 (the same stage), so readers are done first.
// * Index widths: positions and channel offsets in int32 (cutegen_workspace_bytes refuses shapes beyond
//   them), image and output offsets in int64 (a KernelBench output reaches 2^31 elements).
// Before any header: an assert left in device code is a call, and ptxas then serialises every wgmma of the
// kernel (warning C7510: each HGMMA waits for the one before). Defined further down, after cute/tensor.hpp,
// it came too late: the asserts of copy_traits_sm90_tma.hpp and fast_math.h stayed, and the TMA path's
// wgmmas ran one at a time. SourceRules.WgmmaLibraryFilesDefineNdebugBeforeAnyHeader checks the order;
// `cutegen compile` prints ptxas's note ("warning: ptxas: (C7510) ...") when a kernel has it.
#ifndef NDEBUG
#define NDEBUG
#endif
#include <cutegen/kernel.h>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

#include <algorithm>
#include <cstdint>

using namespace cute;

// Output channels per CTA tile: 64 suits the 16-128-channel layers of KernelBench; 128 halves the gathers
// of A per output for layers with many channels, at twice the registers (one CTA per SM).
// cutegen:knob CIG_TILE_N in {64, 128}
#ifndef CIG_TILE_N
#define CIG_TILE_N 64
#endif
// The mainloop: 0 mma.sync from registers (the default), 1 wgmma from swizzled shared memory fed by a
// warp-specialised producer warpgroup (below). Measured on an H200 (benchmarks/results.md) the wgmma form
// is correct but still slower than mma.sync: 3.06 ms against 2.63 on problems/conv2d_3x3.py (CIG_TILE_N 128,
// 3 stages), 48.9 against 32.1 ms on KernelBench 63 -- one CTA per SM (192 KB of stages) whose 4
// producer warps cannot keep the gathers of enough tiles in flight, where mma.sync runs two CTAs of 8
// gathering warps each. It is kept for `cutegen tune` and as the base for a TMA-im2col producer.
// cutegen:knob CIG_WGMMA in {0, 1}
#ifndef CIG_WGMMA
#define CIG_WGMMA 0
#endif
// Shared-memory stages of the cp.async pipeline: 36 KB each for mma.sync at CIG_TILE_N 64 (three keep
// two CTAs per SM), 48 KB for wgmma (two tiles in flight at 4; at most 3 with CIG_TILE_N 128).
// cutegen:knob CIG_STAGES in {3, 4}
#ifndef CIG_STAGES
#define CIG_STAGES 3
#endif
// cutegen:require CIG_WGMMA == 0 || CIG_TILE_N * CIG_STAGES <= 384
// The TMA-im2col path for dense forward convolutions (groups 1, at least 8 input channels): the input is
// re-laid once per call as NHWC with every channel split into TF32 parts, and CUTLASS's SM90 implicit-GEMM
// convolution (CuTe: TMA im2col loads, a warp-specialised mbarrier pipeline, wgmma) runs one TF32
// convolution over the tripled channels; below, "The TMA-im2col path". 0 keeps every convolution on the
// gather kernel above. Judged on an H200 (benchmarks/results.md, "Convolution"): correct, 1.27-1.42x the
// gather kernel on dense 2-d layers. Its packed copies take more workspace than the gather kernel's tables
// (about 3x the input): a seed whose workspace would then pass the judge's cap sets 0 here, saying why.
// cutegen:knob CIG_TMA in {0, 1}
#ifndef CIG_TMA
#define CIG_TMA 1
#endif
// Its output tile: M output positions x N output channels for one consumer warpgroup, whose main and
// per-chunk accumulators both live in registers (2 x M x N / 128 per thread).
// cutegen:knob CIG_TMA_TILE_M in {64, 128}
#ifndef CIG_TMA_TILE_M
#define CIG_TMA_TILE_M 64
#endif
// Narrower than a group's output channels only re-reads the input tile; wider multiplies zeros: KernelBench 58 (16
// output channels) 6.68 ms at 64 wide, 3.77 at 16; 70 (24) 41.3 at 64, 26.9 at 32 (H100, benchmarks/results.md).
// cutegen:knob CIG_TMA_TILE_N in {16, 32, 64, 128}
#ifndef CIG_TMA_TILE_N
#define CIG_TMA_TILE_N 128
#endif
// k-tiles (128 bytes of K' each: 32 TF32 or 64 bf16 values) per promotion into the main accumulator:
// 2 = every 64 TF32 terms, as the GEMM.
// cutegen:knob CIG_TMA_PROMOTE in {1, 2, 4}
#ifndef CIG_TMA_PROMOTE
#define CIG_TMA_PROMOTE 2
#endif
// cutegen:require CIG_TMA_TILE_M * CIG_TMA_TILE_N <= 8192
// Its shared-memory stages: 0 fills shared memory (CUTLASS's carve-out: one CTA, so one consumer warpgroup
// issuing wgmma, per SM -- CUTLASS 4.2's SM90 convolution has no cooperative or ping-pong schedule); a few
// stages leave room for a second CTA, and with it a second warpgroup to keep the tensor cores busy while the
// first waits or runs its epilogue -- where registers allow (CIG_TMA_MIN_CTAS below): a 64 x 128 tile's stage is
// ~24.6 KB, so 4 stages (98 KB) let two CTAs share an SM; the 64 x 64 tile's half-size accumulators fit three.
// 0 is the library's own default.
// cutegen:knob CIG_TMA_STAGES in {0, 3, 4, 5}
#ifndef CIG_TMA_STAGES
#define CIG_TMA_STAGES 0
#endif
// The CTAs per SM the TMA path's kernel is compiled for (the second argument of CUTLASS's __launch_bounds__): 2
// holds ptxas to 128 registers a thread, so two CTAs of 256 threads fit the SM's 64K registers beside each
// other where the stages leave room. Without it the 64 x 128 tile took ~130-140 registers: one CTA per SM, so
// no tensor-core work while that CTA's epilogue ran. KernelBench level 2's task 4 (conv, mish, mish) on an
// H100: 15.16 ms at 4 stages and 1, 10.9 at 4 and 2; task 1 (conv, ReLU, bias) 5.585 -> 4.484 ms
// (benchmarks/results.md, "Convolution").
// cutegen:knob CIG_TMA_MIN_CTAS in {1, 2}
#ifndef CIG_TMA_MIN_CTAS
#define CIG_TMA_MIN_CTAS 1
#endif
static_assert(CIG_TMA_MIN_CTAS == 1 || CIG_TMA_MIN_CTAS == 2, "CIG_TMA_MIN_CTAS: 1 or 2 CTAs per SM");
// Shared memory filled by one CTA leaves no room for a second.
// cutegen:require CIG_TMA_MIN_CTAS == 1 || CIG_TMA_STAGES != 0
// CTAs per cluster along M (output positions): 2 runs two neighbouring tiles as a cluster that loads each
// k-tile of the packed weight once and multicasts it to both (TMA multicast). The weight tile is the larger
// operand at the default 64 x 128 tile, and every tile reads all of it: KernelBench 55 reads ~58 GB of
// weight tiles from L2 against ~29 GB of input, near the L2's bandwidth at the kernel's measured rate.
// cutegen:knob CIG_TMA_CLUSTER_M in {1, 2}
#ifndef CIG_TMA_CLUSTER_M
#define CIG_TMA_CLUSTER_M 1
#endif
// Strict policy only: 0 packs [big | small | big] x [big | big | small] (three k-tiles of copies for each
// 32 channels, one product per k-tile, as the GEMM does); 1 packs [big | small] x [big | small] per 32
// channels and forms the three products big.big + small.big + big.small from the two stages of a pair of
// k-tiles. Same products, same promotion, two thirds of the packed input and of the tiles loaded per output.
// Needs at least 4 shared-memory stages (a pair in use while the previous pair drains).
// cutegen:knob CIG_TMA_PAIRED in {0, 1}
#ifndef CIG_TMA_PAIRED
#define CIG_TMA_PAIRED 0
#endif
// cutegen:require CIG_TMA_PAIRED == 0 || CIG_TMA_STAGES == 0 || CIG_TMA_STAGES >= 4
// The output: 0 stores NHWK tiles with CUTLASS's TMA epilogue into the workspace, then a pass transposes them to
// NCHW with the bias and the epilogue (the output written, read and written again); 1 stores each accumulator
// straight to its NCHW place with the bias and the epilogue applied (NchwStore below): no NHWK buffer, one write.
// A warp's stores cover 8 consecutive positions of 4 channels, whole 32-byte sectors. On an H100 (2026-12-05,
// benchmarks/results.md) never slower and correct on all seven layers judged: KernelBench 57 12.78 -> 11.38 ms,
// 71 4.70 -> 4.30, 55 and 67 level.
// cutegen:knob CIG_TMA_NCHW in {0, 1}
#ifndef CIG_TMA_NCHW
#define CIG_TMA_NCHW 1
#endif
// Images per chunk of the TMA path's packed copies (below, Layout3); 0 lets the path choose about 1 GiB of
// them. Not a knob: a seed whose other buffers leave less of the judge's workspace cap sets the number that
// fits, rather than leave the convolution to the gather kernel.
#ifndef CIG_TMA_CHUNK_IMAGES
#define CIG_TMA_CHUNK_IMAGES 0
#endif
static_assert(CIG_TMA_CHUNK_IMAGES >= 0, "CIG_TMA_CHUNK_IMAGES: images per chunk, 0 for about 1 GiB");
// The operands for a run's precision policy (docs/kernel-contract.md, "Precision"); not a knob, since the judge's
// policy decides which are allowed: 0 strict (3xTF32: fp32 accuracy, the default), 1 tf32 (one TF32
// product per term: a third of the channels, for `--precision tf32`), 2 bf16 (bf16 operands, fp32
// accumulation, for `--precision bf16`). The gather kernel's mma.sync mainloop runs one TF32 product per
// term under both looser policies (A and the weight rounded to TF32: the small parts are neither loaded nor
// multiplied); its wgmma variant (CIG_WGMMA 1) stays 3xTF32, more exact than either asks.
#ifndef CIG_PRECISION
#define CIG_PRECISION 0
#endif
static_assert(CIG_PRECISION >= 0 && CIG_PRECISION <= 2, "CIG_PRECISION: 0 strict, 1 tf32, 2 bf16");
// The tensors' type, which the problem decides (not a knob; a seed sets it): 0 fp32, 1 bf16 -- the input,
// weight, bias and output in bf16, as a bf16 model runs nn.Conv*. The TMA path then packs bf16 operands (as
// CIG_PRECISION 2, whatever that says), accumulates in fp32, applies the bias and the epilogue in fp32 and
// rounds the result once. The gather kernel reads fp32 only: a bf16 convolution the TMA path does not take is
// refused (CUTEGEN_ERROR_UNSUPPORTED at planning), and so is one with epilogue operands.
#ifndef CIG_IO_BF16
#define CIG_IO_BF16 0
#endif
static_assert(CIG_IO_BF16 == 0 || CIG_IO_BF16 == 1, "CIG_IO_BF16: 0 fp32 tensors, 1 bf16 tensors");
// The TMA path's knobs change nothing while it is off: variants that differ only there are one kernel.
// cutegen:require CIG_TMA == 1 || (CIG_TMA_TILE_M == 64 && CIG_TMA_TILE_N == 128 && CIG_TMA_PROMOTE == 2 && CIG_TMA_STAGES == 0 && CIG_TMA_CLUSTER_M == 1 && CIG_TMA_PAIRED == 0 && CIG_TMA_NCHW == 1 && CIG_TMA_MIN_CTAS == 1)
// The direct path for few-channel layers (below, "The direct path"): FP32 FMA on the CUDA cores instead of the
// gather kernel, where a phase's K (taps x input channels of a group) is at most 128 -- a 3-channel image under
// a 3x3x3 window has 81. 1 runs such shapes there (others still on the gather kernel); the seed sets it for
// layers of fewer than 8 input channels, which the TMA path does not take. fp32 products and sums: exact under
// every policy, no TF32 split.
// cutegen:knob CIG_DIRECT in {0, 1}
#ifndef CIG_DIRECT
#define CIG_DIRECT 0
#endif
// Output channels per CTA on the direct path (16 per thread; 12 at 24): the seed sets the smallest that covers a
// group's channels, so a 16-channel layer does not compute 48 columns of padding, nor a 24-channel one 8.
// cutegen:knob CIG_DIRECT_TILE_N in {16, 24, 32, 64}
#ifndef CIG_DIRECT_TILE_N
#define CIG_DIRECT_TILE_N 64
#endif
// cutegen:require CIG_DIRECT == 1 || CIG_DIRECT_TILE_N == 64
// cutegen:require CIG_DIRECT == 0 || (CIG_TMA == 0 && CIG_WGMMA == 0)
static_assert(!(CIG_DIRECT && CIG_IO_BF16), "CIG_DIRECT: the direct path reads fp32 tensors");
// Statistics instead of the output (set by the seed's conv_stats route, never tuned): the direct path adds, per
// (image, output channel), the sum and the sum of squares of the epilogue's values -- in double -- into the
// (N, C, 2) double buffer that the output tensor's data points at (its shape stays the convolution's: the
// geometry comes from it), which the caller zeroes. A norm whose statistics those are, followed by a mean over
// the spatial dimensions, then needs y no more (src/seed/routes/conv_stats). Shapes the direct path does not
// take are refused (CUTEGEN_ERROR_UNSUPPORTED).
#ifndef CIG_STATS
#define CIG_STATS 0
#endif
static_assert(CIG_STATS == 0 || (CIG_DIRECT == 1 && CIG_TMA == 0), "CIG_STATS: on the direct path only");

namespace conv_ig {

// What the seed sets from the module (one line, replaced whole). Per dimension in (D, H, W) order; a 2-d
// convolution has stride 1, padding 0 and dilation 1 in D, a 1-d one in D and H as well.
struct ConvSpec {
  int dims;         // 1, 2 or 3 spatial dimensions
  bool transposed;  // nn.ConvTransposeNd: weight (C_in, C_out / groups, kernel...)
  int groups;
  int stride[3], padding[3], dilation[3];
};
constexpr ConvSpec kSpec = {2, false, 1, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}};
// Where the kernel's tensors are among the contract's inputs (forward()'s arguments, then the module's
// parameters: docs/kernel-contract.md) and how many inputs there are (a module may have parameters nothing
// reads): the convolved input, the weight and the bias (-1: none). num_inputs 0 is the library's own reading,
// which the plain convolution seed keeps: (x, weight) or (x, weight, bias).
struct ConvInputs {
  int num_inputs, x, weight, bias;
};
constexpr ConvInputs kInputs = {0, 0, 1, 2};
// The tensors' element type (CIG_IO_BF16) and its contract dtype.
using Io = cute::conditional_t<CIG_IO_BF16 == 1, cutlass::bfloat16_t, float>;
constexpr cutegen_dtype kIoDtype = CIG_IO_BF16 ? CUTEGEN_BFLOAT16 : CUTEGEN_FLOAT32;
// The policy the kernels follow: the run's (CIG_PRECISION), or bf16 for bf16 tensors. Under strict every
// product is 3xTF32 (big x big + big x small + small x big); under a looser one the gather kernel's mma.sync
// mainloop keeps only big x big.
constexpr int kPolicy = CIG_IO_BF16 ? 2 : CIG_PRECISION;
constexpr bool kSplitTf32 = kPolicy == 0;

// The epilogue: what each output value y -- the convolution plus its bias, in fp32 -- of output channel `ch`
// becomes before it is stored at offset `at` of the output. The library's own is the identity; the seed's
// conv_epilogue route (docs/seed.md) sets the operands and the body to the pointwise ops forward() applies
// after the convolution, so the convolution's output never makes a round trip through memory. Each operand
// is a further contract input, read as one value per output channel (a (C, 1, 1) parameter), one number (a
// 0-d tensor) or one value per output element (a tensor of the output's shape); `e.p[i]` is operand i.
enum class EpilogueReads { channel, number, element };
struct EpilogueOperand {
  int input;
  EpilogueReads reads;
};
constexpr int kNumEpilogueOperands = 0;
constexpr EpilogueOperand kEpilogueOperands[kNumEpilogueOperands + 1] = { {-1, EpilogueReads::number} };  // + 1 unused
struct EpilogueInputs {
  const float* p[kNumEpilogueOperands + 1];
};
__device__ __forceinline__ float epilogue(float y, [[maybe_unused]] int ch, [[maybe_unused]] int64_t at,
                                          [[maybe_unused]] const EpilogueInputs& e) {
  return y;  // the library's epilogue: none
}

constexpr int kThreads = 256;
constexpr int BM = 128, BN = CIG_TILE_N, BK = 32, kStages = CIG_STAGES;
constexpr int kLdA = BM + 8;  // shared A is (k, m) with m contiguous; the pad spreads a fragment's rows over banks
constexpr int kLdB = BN + 8;
constexpr int kStageFloats = BK * kLdA + 2 * BK * kLdB;  // mma.sync: A, B big, B small
[[maybe_unused]] constexpr int kSmemBytes = kStages * kStageFloats * 4;
static_assert(BM * BK % kThreads == 0 && (2 * BK * BN / 4) % kThreads == 0, "tiles split evenly over the threads");

struct Geometry {
  ConvSpec spec;  // kSpec, carried to the device (divisions in the hot loops are by sizes, not by these)
  int phases;     // phases(0) * phases(1) * phases(2)
  int n, cin_g, cout_g, groups;
  int in[3], out[3], ker[3];  // D, H, W (1 where the convolution has fewer dimensions)
  int in_vol, ker_vol;        // in[0]*in[1]*in[2], ker[0]*ker[1]*ker[2]
  int64_t out_vol;
  int kmax;      // the largest phase's taps x channels, rounded up to BK
  int cout_pad;  // cout_g rounded up to BN
  int mmax;      // the largest phase's output positions (all images)

  // Phases per dimension: s for a transposed convolution, 1 for a forward one.
  __host__ __device__ int phases_in(int d) const { return spec.transposed ? spec.stride[d] : 1; }
  // Input i = q * step + e: step s forward, 1 transposed.
  __host__ __device__ int step_of(int d) const { return spec.transposed ? 1 : spec.stride[d]; }
};

// The valid kernel taps of one dimension in phase r, in order, and the input offset e of the j-th.
struct DimTaps {
  int count = 0;
  int k[16] = {};  // kernel index of the j-th valid tap (kernel sizes are at most 16, checked on the host)
  int e[16] = {};
};
__host__ __device__ inline DimTaps taps_of(const ConvSpec& sp, int d, int ksize, int r) {
  DimTaps t;
  const int s = sp.stride[d], p = sp.padding[d], dil = sp.dilation[d];
  for (int k = 0; k < ksize; ++k) {
    if (!sp.transposed) {
      t.k[t.count] = k;
      t.e[t.count++] = k * dil - p;
    } else {
      const int num = r + p - k * dil;
      if (((num % s) + s) % s != 0) continue;
      t.k[t.count] = k;
      t.e[t.count++] = num / s;  // exact, so truncation is right for negatives too
    }
  }
  return t;
}
// How many taps of one dimension are valid in phase r (taps_of's count without its tables: all the main
// kernel needs).
__host__ __device__ inline int tap_count(const ConvSpec& sp, int d, int ksize, int r) {
  if (!sp.transposed) return ksize;
  const int s = sp.stride[d], p = sp.padding[d], dil = sp.dilation[d];
  int count = 0;
  for (int k = 0; k < ksize; ++k) count += ((r + p - k * dil) % s + s) % s == 0;
  return count;
}

__host__ __device__ inline void phase_coords(const Geometry& g, int phase, int r[3]) {
  r[2] = phase % g.phases_in(2);
  r[1] = phase / g.phases_in(2) % g.phases_in(1);
  r[0] = phase / (g.phases_in(2) * g.phases_in(1));
}
// Outputs o = r + s q of phase r in one dimension (all outputs for a forward convolution).
__host__ __device__ inline int q_extent(const Geometry& g, int d, int r) {
  const int s = g.phases_in(d);
  return g.out[d] > r ? (g.out[d] - r + s - 1) / s : 0;
}
__host__ __device__ inline int phase_taps(const Geometry& g, int phase) {
  int r[3];
  phase_coords(g, phase, r);
  int taps = 1;
  for (int d = 0; d < 3; ++d) taps *= tap_count(g.spec, d, g.ker[d], r[d]);
  return taps;
}

// Tap table entry of k = tap * cin_g + c in a phase: the element offset of (channel c, offsets e) from an
// output position's base input element, and the three e's for the bounds tests. The K padding has
// ex = kNoTap, which fails the W bounds test from any position (so no separate test is needed).
struct alignas(16) Tap {
  int off, ez, ey, ex;
};
constexpr int kNoTap = -(1 << 29);  // also a position's base W when it is past M: the sum stays in int32

// The k-th (tap, channel) of a phase: tap j decomposed over the dimensions' valid taps, W fastest.
__host__ __device__ inline bool decode_k(const Geometry& g, int phase, int k, int& c, int kidx[3], int e[3]) {
  if (k >= phase_taps(g, phase) * g.cin_g) return false;
  int r[3];
  phase_coords(g, phase, r);
  c = k % g.cin_g;
  int j = k / g.cin_g;
  for (int d = 2; d >= 0; --d) {
    const DimTaps t = taps_of(g.spec, d, g.ker[d], r[d]);
    kidx[d] = t.k[j % t.count];
    e[d] = t.e[j % t.count];
    j /= t.count;
  }
  return true;
}

__global__ void prepare_taps(Geometry g, Tap* table) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.phases * g.kmax) return;
  Tensor taps = make_tensor(make_gmem_ptr(table), make_shape(g.phases * g.kmax));
  const int phase = i / g.kmax, k = i % g.kmax;
  int c, kidx[3], e[3];
  taps(i) = decode_k(g, phase, k, c, kidx, e)
                ? Tap{c * g.in_vol + (e[0] * g.in[1] + e[1]) * g.in[2] + e[2], e[0], e[1], e[2]}
                : Tap{0, 0, 0, kNoTap};
}

__device__ __forceinline__ uint32_t tf32_bits(float x) { return (__float_as_uint(x) + 0x1000u) & 0xffffe000u; }

// Element i of the re-laid weight B[group][phase][k][j] (k_major: B[group][phase][j][k]): the weight of the k-th
// (tap, channel) for output channel j, 0 in the K and channel padding.
__device__ __forceinline__ float weight_element(const Geometry& g, const float* __restrict__ w, int64_t i,
                                                bool k_major) {
  const int64_t per_group = int64_t(g.phases) * g.kmax * g.cout_pad;
  Tensor gW = make_tensor(make_gmem_ptr(w), make_shape(int64_t(g.groups) * g.cin_g * g.cout_g * g.ker_vol));
  const int grp = static_cast<int>(i / per_group);
  const int64_t rest = i % per_group;
  const int phase = static_cast<int>(rest / (int64_t(g.kmax) * g.cout_pad));
  const int64_t in_phase = rest % (int64_t(g.kmax) * g.cout_pad);
  const int k = static_cast<int>(k_major ? in_phase % g.kmax : in_phase / g.cout_pad);
  const int j = static_cast<int>(k_major ? in_phase / g.kmax : in_phase % g.cout_pad);
  int c, kidx[3], e[3];
  float v = 0.f;
  if (j < g.cout_g && decode_k(g, phase, k, c, kidx, e)) {
    const int tap = (kidx[0] * g.ker[1] + kidx[1]) * g.ker[2] + kidx[2];
    // forward: (C_out, C_in/groups, kernel...); transposed: (C_in, C_out/groups, kernel...)
    const int64_t at = g.spec.transposed
                           ? ((int64_t(grp) * g.cin_g + c) * g.cout_g + j) * g.ker_vol + tap
                           : ((int64_t(grp) * g.cout_g + j) * g.cin_g + c) * g.ker_vol + tap;
    v = gW(at);
  }
  return v;
}

// B as TF32 big and small parts, zero in the K and channel padding: B[group][phase][j][k] (K-major rows,
// what wgmma reads) or B[group][phase][k][j] (rows of channels, what the mma.sync path copies).
__global__ void prepare_weight(Geometry g, const float* __restrict__ w, float* big, float* small) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t per_group = int64_t(g.phases) * g.kmax * g.cout_pad;
  if (i >= per_group * g.groups) return;
  Tensor gBig = make_tensor(make_gmem_ptr(big), make_shape(per_group * g.groups));
  Tensor gSmall = make_tensor(make_gmem_ptr(small), make_shape(per_group * g.groups));
  const float v = weight_element(g, w, i, CIG_WGMMA);
  const uint32_t hi = tf32_bits(v);
  gBig(i) = __uint_as_float(hi);
  gSmall(i) = __uint_as_float(tf32_bits(v - __uint_as_float(hi)));
}

// What a CTA works on: its group and phase (blockIdx.z), the phase's output grid q and its positions
// m0.. (blockIdx.x) and channels n0.. (blockIdx.y), and how many k-tiles the phase's taps make.
struct CtaWork {
  int grp, phase, r[3], qh, qw, q_vol, m_count, m0, n0, k_tiles;
  __device__ explicit CtaWork(const Geometry& g) {
    grp = blockIdx.z / g.phases;
    phase = blockIdx.z % g.phases;
    phase_coords(g, phase, r);
    qh = q_extent(g, 1, r[1]);
    qw = q_extent(g, 2, r[2]);
    q_vol = q_extent(g, 0, r[0]) * qh * qw;
    m_count = g.n * q_vol;
    m0 = blockIdx.x * BM;
    n0 = blockIdx.y * BN;
    k_tiles = (phase_taps(g, phase) * g.cin_g + BK - 1) / BK;
  }
  __device__ bool empty() const { return m0 >= m_count; }  // this phase has fewer positions than the largest
  // Where output position m of this CTA's phase goes: (image, o) as an offset within one channel plane
  // of y, plus the image's offset.
  __device__ int64_t output_offset(const Geometry& g, int m, int channel) const {
    const int img = m / q_vol, q = m % q_vol;
    const int q3[3] = {q / (qh * qw), q / qw % qh, q % qw};
    int o[3];
    for (int d = 0; d < 3; ++d) o[d] = r[d] + g.phases_in(d) * q3[d];
    return (int64_t(img) * g.groups * g.cout_g + channel) * g.out_vol + (int64_t(o[0]) * g.out[1] + o[1]) * g.out[2] +
           o[2];
  }
};

// One thread's part of the A gather: position m0 + m of the CTA. The per-element work is what the
// producer's instruction budget is spent on, so it is three adds and up to three unsigned compares (only
// for the dimensions the convolution has: kSpec is a constant) and one add to a 64-bit pointer.
struct Gather {
  int base[3] = {0, 0, kNoTap};  // the position's first input coordinates (W = kNoTap past M)
  int lin = 0;                   // their element offset within the image's group of channels
  const float* x_img;
  const Tap* taps;
  __device__ Gather(const Geometry& g, const CtaWork& w, const float* x, const Tap* table, int m) : x_img(x) {
    if (w.m0 + m < w.m_count) {
      const int pos = w.m0 + m, img = pos / w.q_vol, q = pos % w.q_vol;
      const int q3[3] = {q / (w.qh * w.qw), q / w.qw % w.qh, q % w.qw};
      for (int d = 0; d < 3; ++d) base[d] = q3[d] * g.step_of(d);
      lin = (base[0] * g.in[1] + base[1]) * g.in[2] + base[2];
      x_img = x + (int64_t(img) * g.groups + w.grp) * g.cin_g * int64_t(g.in_vol);
    }
    taps = table + int64_t(w.phase) * g.kmax;
  }
  // The input element that tap t reads, and whether it exists (false: padding or past M/K; the pointer is
  // then any valid address and cp.async writes a zero).
  __device__ const float* source(const Geometry& g, const Tap& t, const float* any, bool& ok) const {
    ok = unsigned(base[2] + t.ex) < unsigned(g.in[2]);
    if (kSpec.dims >= 2) ok = ok && unsigned(base[1] + t.ey) < unsigned(g.in[1]);
    if (kSpec.dims >= 3) ok = ok && unsigned(base[0] + t.ez) < unsigned(g.in[0]);
    return ok ? x_img + (lin + t.off) : any;
  }
  __device__ const float* source(const Geometry& g, int k, const float* any, bool& ok) const {
    return source(g, taps[k], any, ok);
  }
};

// epilogue(acc (+ bias)) to y, element by element at the coordinates CuTe gives each accumulator.
template <class Acc, class Coords>
__device__ void store_outputs(const Geometry& g, const CtaWork& w, const Acc& acc, const Coords& tCcC,
                              const float* __restrict__ bias, const EpilogueInputs& ep, float* __restrict__ y) {
  Tensor gY = make_tensor(make_gmem_ptr(y), make_shape(int64_t(g.n) * g.groups * g.cout_g * g.out_vol));
  CUTE_UNROLL
  for (int i = 0; i < size(acc); ++i) {
    const int m = w.m0 + get<0>(tCcC(i)), j = w.n0 + get<1>(tCcC(i));
    if (m >= w.m_count || j >= g.cout_g) continue;
    const int ch = w.grp * g.cout_g + j;
    const int64_t at = w.output_offset(g, m, ch);
    gY(at) = epilogue(bias ? acc(i) + bias[ch] : acc(i), ch, at, ep);
  }
}

#if CIG_WGMMA
// --- the Hopper mainloop: a warp-specialised producer and wgmma from swizzled shared memory ---
// Three warpgroups. The first is the producer: it gathers A (4-byte cp.async, zero-filled in the padding)
// into A big's slots of a stage and copies B big and small (16-byte cp.async), waits for its own copies of
// the previous tile, splits that tile's A in place into big and small, fences the generic-proxy writes
// for the async proxy and arrives on the stage's `full` barrier. The other two are consumers: each owns
// 64 of the tile's 128 rows, waits on `full`, runs the k-tile's 4 k-blocks x 3 wgmmas (64 x BN x 8) into a
// fresh fragment, waits for them, adds the fragment to its total (the promotion) and arrives on the
// stage's `empty` barrier, which the producer waits on before it refills the stage. So the gather of
// tiles t + 1.. overlaps the wgmmas of tile t, which the one-role form (every warp gathering, then
// waiting for its own wgmmas) could not do.
// A stage holds A big, A small, B big, B small, each K-major in 128-byte-swizzled rows of 32 TF32 values
// (GMMA's K-major SW128 atom; BK = 32 is one row).
// Why the producer's lanes are laid out as they are: a warp's 4-byte copies of one instruction cover 8
// rows x 4 consecutive k, which the swizzle puts in 32 distinct banks (a row per lane would put a warp on
// 8 banks); the split then walks whole 16-byte chunks, a quarter-warp per row (conflict-free too), so
// the producer warps meet at a named barrier between the two.
constexpr int kWsThreads = 384;  // producer warpgroup + two consumer warpgroups
constexpr int kProducerThreads = 128;
// setmaxnreg moves registers between the warpgroups within what the CTA was given at launch: 168 a thread
// (65536 / 384, rounded down to the allocation unit of 8). Asking for more than the producer gave back
// would make the consumers' setmaxnreg wait for ever: the sums must stay within the pool.
constexpr int kProducerRegs = 88, kConsumerRegs = 208;
static_assert(kProducerThreads * kProducerRegs + (kWsThreads - kProducerThreads) * kConsumerRegs <= kWsThreads * 168,
              "the warpgroups' registers exceed the CTA's pool");
using SmemAtom = GMMA::Layout_K_SW128_Atom<tfloat32_t>;
using SmemA = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<BM>{}, Int<BK>{}, Int<kStages>{})));
using SmemB = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<BN>{}, Int<BK>{}, Int<kStages>{})));
constexpr int kAFloats = cosize_v<SmemA>, kBFloats = cosize_v<SmemB>;
// + the barriers (2 x 8 bytes a stage) and the 1024-byte alignment of the swizzled stages
constexpr int kWgmmaSmemBytes = (2 * kAFloats + 2 * kBFloats) * 4 + 1024 + 1024;
static_assert(kStages >= 3, "the producer keeps one tile in flight while it splits the one before");
static_assert(kWgmmaSmemBytes <= 227 * 1024, "CIG_STAGES x CIG_TILE_N too large for shared memory");
static_assert(cosize_v<SmemA> == BM * BK * kStages, "stages are dense in shared memory (the split's offsets)");
static_assert(BM == 128 && BK == 32, "the producer's lane layout covers 128 x 32 A tiles");

template <class TiledMma>
__global__ void __launch_bounds__(kWsThreads, 1)
    conv_wgmma_kernel(Geometry g, const float* __restrict__ x, const Tap* __restrict__ table,
                      const float* __restrict__ wbig, const float* __restrict__ wsmall, const float* __restrict__ bias,
                      const EpilogueInputs ep, float* __restrict__ y, TiledMma mma) {
  const CtaWork w(g);
  if (w.empty()) return;  // the whole CTA, before any barrier
  extern __shared__ char smem_raw[];
  float* smem = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) / 1024 * 1024);
  float* a_big_p = smem;
  float* a_small_p = a_big_p + kAFloats;
  float* b_big_p = a_small_p + kAFloats;
  float* b_small_p = b_big_p + kBFloats;
  using Barrier = cutlass::arch::ClusterBarrier;
  Barrier* full = reinterpret_cast<Barrier*>(b_small_p + kBFloats);
  Barrier* empty = full + kStages;

  const int tid = threadIdx.x;
  if (tid == 0) {
    CUTE_UNROLL
    for (int s = 0; s < kStages; ++s) {
      full[s].init(kProducerThreads);
      empty[s].init(kWsThreads - kProducerThreads);
    }
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();

  if (tid < kProducerThreads) {
    cutlass::arch::warpgroup_reg_dealloc<kProducerRegs>();
    Tensor sA_land = make_tensor(make_smem_ptr(a_big_p), SmemA{});  // the gather's fp32 view of A big
    Tensor sB_big = make_tensor(make_smem_ptr(b_big_p), SmemB{});
    Tensor sB_small = make_tensor(make_smem_ptr(b_small_p), SmemB{});
    // Lane (row r8, k k4) of warp wp copies A(wp * 8 + r8 + 32 i, 4 c + k4) for i < 4, c < 8.
    const int lane = tid % 32, wp = tid / 32, k4 = lane % 4;
    const int row0 = wp * 8 + lane / 4;
    const Gather rows[4] = {Gather(g, w, x, table, row0), Gather(g, w, x, table, row0 + 32),
                            Gather(g, w, x, table, row0 + 64), Gather(g, w, x, table, row0 + 96)};
    const Tap* tap_row = rows[0].taps;
    // B rows are K-major in the workspace: B[group][phase][channel][k], 32 floats (8 copies of 16 bytes) a row.
    const int64_t b_offset = ((int64_t(w.grp) * g.phases + w.phase) * g.cout_pad + w.n0) * int64_t(g.kmax);
    auto load_tile = [&](int kt, int stage) {
#pragma unroll 2  // fully unrolled, the 32 copies' addresses would not fit the producer's registers
      for (int c = 0; c < BK / 4; ++c) {
        const int kl = 4 * c + k4;
        const Tap t = tap_row[kt * BK + kl];  // one tap for the four rows
        // The swizzle repeats every 8 rows and the stage stacks 8-row atoms along M, so the four rows'
        // slots are 32 rows (32 x BK floats) apart.
        float* dst = &sA_land(row0, kl, stage);
        CUTE_UNROLL
        for (int i = 0; i < 4; ++i) {
          bool ok;
          const float* src = rows[i].source(g, t, x, ok);
          SM80_CP_ASYNC_CACHEALWAYS_ZFILL<float>::copy(*src, dst[i * 32 * BK], ok);
        }
      }
      CUTE_UNROLL
      for (int v = tid; v < 2 * BN * (BK / 4); v += kProducerThreads) {
        const int part = v / (BN * (BK / 4)), row = v / (BK / 4) % BN, col = v % (BK / 4) * 4;
        const float* src = (part ? wsmall : wbig) + b_offset + int64_t(row) * g.kmax + kt * BK + col;
        float& dst = part ? sB_small(row, col, stage) : sB_big(row, col, stage);
        SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>::copy(*reinterpret_cast<const uint128_t*>(src),
                                                   *reinterpret_cast<uint128_t*>(&dst));
      }
    };
    // A big -> (big, small) in place, a row's 16-byte chunks per quarter-warp (the layouts of big and
    // small are equal, so a chunk's small part sits at the same offset).
    auto split_stage = [&](int stage) {
      // Thread t splits chunk t % 8 of rows t / 8 + 16 i: one swizzle phase (rows 16 apart), so the
      // chunks are 16 rows (16 x BK floats) apart.
      float* big0 = &sA_land(tid / 8, 4 * (tid % 8), stage);
#pragma unroll 2  // all 8 chunks in flight at once would spill: the producer keeps its 4 gathers live too
      for (int i = 0; i < BM * (BK / 4) / kProducerThreads; ++i) {
        float4* big = reinterpret_cast<float4*>(big0 + i * 16 * BK);
        float4* small = reinterpret_cast<float4*>(a_small_p + (big0 - a_big_p) + i * 16 * BK);
        const float4 v4 = *big;
        float4 hi, lo;
        hi.x = __uint_as_float(tf32_bits(v4.x));
        hi.y = __uint_as_float(tf32_bits(v4.y));
        hi.z = __uint_as_float(tf32_bits(v4.z));
        hi.w = __uint_as_float(tf32_bits(v4.w));
        lo.x = __uint_as_float(tf32_bits(v4.x - hi.x));
        lo.y = __uint_as_float(tf32_bits(v4.y - hi.y));
        lo.z = __uint_as_float(tf32_bits(v4.z - hi.z));
        lo.w = __uint_as_float(tf32_bits(v4.w - hi.w));
        *big = hi;
        *small = lo;
      }
    };
    // Tile kt - 1 is handed over once tile kt's copies are in flight: its copies (everyone's, hence the
    // producers' named barrier) have landed, it is split, and the writes are fenced for wgmma.
    auto hand_over = [&](int kt) {
      cutlass::arch::NamedBarrier::sync(kProducerThreads, 1);
      split_stage(kt % kStages);
      cutlass::arch::fence_view_async_shared();
      full[kt % kStages].arrive();
    };
    // kStages - 2 tiles' copies stay in flight while the oldest is split and handed over; the remaining
    // stage is the one the consumers are reading.
    constexpr int kAhead = kStages - 2;
    for (int kt = 0; kt < w.k_tiles; ++kt) {
      const int stage = kt % kStages;
      if (kt >= kStages) empty[stage].wait((kt / kStages - 1) & 1);  // tile kt - kStages's wgmmas are done
      load_tile(kt, stage);
      cp_async_fence();
      if (kt >= kAhead) {
        cp_async_wait<kAhead>();
        hand_over(kt - kAhead);
      }
    }
    cp_async_wait<0>();  // the last tiles (fewer than kAhead when the loop is short), oldest first
    for (int kt = std::max(w.k_tiles - kAhead, 0); kt < w.k_tiles; ++kt) hand_over(kt);
    return;
  }

  // --- consumers ---
  cutlass::arch::warpgroup_reg_alloc<kConsumerRegs>();
  const int ctid = tid - kProducerThreads;
  Tensor sA_big = make_tensor(make_smem_ptr(reinterpret_cast<tfloat32_t*>(a_big_p)), SmemA{});
  Tensor sA_small = make_tensor(make_smem_ptr(reinterpret_cast<tfloat32_t*>(a_small_p)), SmemA{});
  Tensor sB_big = make_tensor(make_smem_ptr(reinterpret_cast<tfloat32_t*>(b_big_p)), SmemB{});
  Tensor sB_small = make_tensor(make_smem_ptr(reinterpret_cast<tfloat32_t*>(b_small_p)), SmemB{});
  ThrMMA thr = mma.get_slice(ctid);
  Tensor tCrA_big = thr.make_fragment_A(thr.partition_A(sA_big));  // descriptors (MMA, MMA_M, MMA_K, PIPE)
  Tensor tCrA_small = thr.make_fragment_A(thr.partition_A(sA_small));
  Tensor tCrB_big = thr.make_fragment_B(thr.partition_B(sB_big));
  Tensor tCrB_small = thr.make_fragment_B(thr.partition_B(sB_small));
  Tensor cC = make_identity_tensor(Shape<Int<BM>, Int<BN>>{});
  Tensor tCcC = thr.partition_C(cC);
  Tensor acc = thr.partition_fragment_C(cC);
  Tensor part = thr.partition_fragment_C(cC);
  clear(acc);

  for (int kt = 0; kt < w.k_tiles; ++kt) {
    const int stage = kt % kStages;
    full[stage].wait((kt / kStages) & 1);
    warpgroup_fence_operand(part);
    warpgroup_arrive();
    mma.accumulate_ = GMMA::ScaleOut::Zero;
    CUTE_UNROLL
    for (int kb = 0; kb < BK / 8; ++kb) {
      gemm(mma, tCrA_small(_, _, kb, stage), tCrB_big(_, _, kb, stage), part);  // the small terms first
      mma.accumulate_ = GMMA::ScaleOut::One;
      gemm(mma, tCrA_big(_, _, kb, stage), tCrB_small(_, _, kb, stage), part);
      gemm(mma, tCrA_big(_, _, kb, stage), tCrB_big(_, _, kb, stage), part);
    }
    warpgroup_commit_batch();
    // Reading the partial sum while its wgmmas run would make ptxas serialise every wgmma (C7514), so the
    // promotion waits for them; the other consumer warpgroup's wgmmas keep the tensor cores busy meanwhile.
    warpgroup_wait<0>();
    empty[stage].arrive();  // this warpgroup no longer reads the stage
    warpgroup_fence_operand(part);
    CUTE_UNROLL
    for (int i = 0; i < size(acc); ++i) acc(i) += part(i);
  }
  store_outputs(g, w, acc, tCcC, bias, ep, y);
}
#else
// --- the portable mainloop: mma.sync m16n8k8 from padded shared memory (Ampere and later) ---
template <class TiledMma>
__global__ void __launch_bounds__(kThreads, BN == 64 ? 2 : 1)
    conv_kernel(Geometry g, const float* __restrict__ x, const Tap* __restrict__ table, const float* __restrict__ wbig,
                const float* __restrict__ wsmall, const float* __restrict__ bias, const EpilogueInputs ep,
                float* __restrict__ y, TiledMma mma) {
  const CtaWork w(g);
  if (w.empty()) return;
  extern __shared__ __align__(16) float smem[];

  // --- the gather: thread t copies A(m0 + t % BM, k) for k = t / BM + 2i of every k-tile ---
  const int tid = threadIdx.x;
  const Gather gather(g, w, x, table, tid % BM);
  const int a_m = tid % BM, a_k0 = tid / BM;
  const int64_t b_offset = (int64_t(w.grp) * g.phases + w.phase) * g.kmax * int64_t(g.cout_pad) + w.n0;

  auto load_tile = [&](int kt, int stage) {
    float* sA = smem + stage * kStageFloats;
    float* sB = sA + BK * kLdA;
    CUTE_UNROLL
    for (int i = 0; i < BM * BK / kThreads; ++i) {
      const int kl = a_k0 + 2 * i;
      bool ok;
      const float* src = gather.source(g, kt * BK + kl, x, ok);
      SM80_CP_ASYNC_CACHEALWAYS_ZFILL<float>::copy(*src, sA[kl * kLdA + a_m], ok);
    }
    // B big then B small: BK rows of BN floats each, 16 bytes a copy (the big part alone under a looser policy).
    constexpr int kVecPerRow = BN / 4, kVecs = (kSplitTf32 ? 2 : 1) * BK * kVecPerRow;
    CUTE_UNROLL
    for (int v = tid; v < kVecs; v += kThreads) {
      const int part = v / (BK * kVecPerRow), row = v / kVecPerRow % BK, col = v % kVecPerRow * 4;
      const float* src = (part ? wsmall : wbig) + b_offset + int64_t(kt * BK + row) * g.cout_pad + col;
      SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>::copy(*reinterpret_cast<const uint128_t*>(src),
                                                 *reinterpret_cast<uint128_t*>(sB + part * BK * kLdB + row * kLdB + col));
    }
  };

  // --- the MMA side: CuTe partitions of the stage's (m, k) and (j, k) tiles ---
  using SmemA = Layout<Shape<Int<BM>, Int<BK>>, Stride<_1, Int<kLdA>>>;
  using SmemB = Layout<Shape<Int<BN>, Int<BK>>, Stride<_1, Int<kLdB>>>;
  ThrMMA thr_mma = mma.get_slice(tid);
  Tensor sA0 = make_tensor(make_smem_ptr(smem), SmemA{});
  Tensor sB0 = make_tensor(make_smem_ptr(smem), SmemB{});
  // (MMA, MMA_M|N, MMA_K) fragments; each k-block of 8 is filled just before its MMAs, so only one
  // k-block's registers are live at a time.
  Tensor rA_big = thr_mma.partition_fragment_A(sA0);
  Tensor rA_small = thr_mma.partition_fragment_A(sA0);
  Tensor rB_big = thr_mma.partition_fragment_B(sB0);
  Tensor rB_small = thr_mma.partition_fragment_B(sB0);
  Tensor cC = make_identity_tensor(Shape<Int<BM>, Int<BN>>{});
  Tensor tCcC = thr_mma.partition_C(cC);
  Tensor acc = thr_mma.make_fragment_C(tCcC);
  Tensor part = thr_mma.make_fragment_C(tCcC);
  clear(acc);

  CUTE_UNROLL
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < w.k_tiles) load_tile(s, s);
    cp_async_fence();
  }
  for (int kt = 0; kt < w.k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // tile kt is in shared memory for everyone; everyone is done with tile kt - 1
    if (kt + kStages - 1 < w.k_tiles) load_tile(kt + kStages - 1, (kt + kStages - 1) % kStages);
    cp_async_fence();

    float* stage = smem + (kt % kStages) * kStageFloats;
    Tensor tCsA = thr_mma.partition_A(make_tensor(make_smem_ptr(stage), SmemA{}));
    Tensor tCsB_big = thr_mma.partition_B(make_tensor(make_smem_ptr(stage + BK * kLdA), SmemB{}));
    Tensor tCsB_small = thr_mma.partition_B(make_tensor(make_smem_ptr(stage + BK * kLdA + BK * kLdB), SmemB{}));
    clear(part);
    CUTE_UNROLL
    for (int kb = 0; kb < BK / 8; ++kb) {
      Tensor sa = tCsA(_, _, kb);
      Tensor a_big = rA_big(_, _, kb);
      Tensor a_small = rA_small(_, _, kb);
      CUTE_UNROLL
      for (int i = 0; i < size(sa); ++i) {
        const float v = sa(i);
        const uint32_t hi = tf32_bits(v);
        a_big(i) = cutlass::tfloat32_t::bitcast(hi);
        if constexpr (kSplitTf32) a_small(i) = cutlass::tfloat32_t::bitcast(tf32_bits(v - __uint_as_float(hi)));
      }
      Tensor sb_big = tCsB_big(_, _, kb);
      Tensor sb_small = tCsB_small(_, _, kb);
      Tensor b_big = rB_big(_, _, kb);
      Tensor b_small = rB_small(_, _, kb);
      CUTE_UNROLL
      for (int i = 0; i < size(sb_big); ++i) {
        b_big(i) = cutlass::tfloat32_t::bitcast(__float_as_uint(sb_big(i)));
        if constexpr (kSplitTf32) b_small(i) = cutlass::tfloat32_t::bitcast(__float_as_uint(sb_small(i)));
      }
      if constexpr (kSplitTf32) {
        gemm(mma, a_small, b_big, part);  // the small terms first
        gemm(mma, a_big, b_small, part);
      }
      gemm(mma, a_big, b_big, part);
    }
    CUTE_UNROLL
    for (int i = 0; i < size(acc); ++i) acc(i) += part(i);  // round-to-nearest: the promotion
  }
  cp_async_wait<0>();

  store_outputs(g, w, acc, tCcC, bias, ep, y);
}
#endif

#if CIG_DIRECT
// --- the direct path (CIG_DIRECT 1): FP32 FMA on the CUDA cores, for few-channel layers ---
// Why: where a phase's K (taps x input channels of a group) is a few k-tiles -- a 3-channel image under a
// 3x3x3 window has 81, under (3, 3, 1) 27 -- the gather kernel spends its time filling and draining its
// pipeline and splitting values into TF32 parts around one to three k-tiles of MMAs (KernelBench 59: 0.46x
// cuDNN, 54: 0.58x), and its 64 channel columns are three quarters padding for level 2's 16-channel layers.
// Here each thread keeps 4 output positions x 16 output channels (12 on a 24-wide tile) in registers and walks
// its phase's K once: per k one tap entry and 16 weights from shared memory (the same for the whole warp:
// broadcasts), one input value per position (a warp's lanes hold 32 consecutive positions: one coalesced load,
// which the window's other taps then find in L1), and 64 FMAs. The tap table and the positions' bounds tests are the gather
// kernel's (Gather::source), so padding, stride, dilation and a transposed layer's phases work as there.
// Accuracy: fp32 products summed in fp32 over at most 256 terms, as cuDNN's fp32 kernels do.
constexpr int kDirectPositions = 4;
constexpr int kDirectTileN = CIG_DIRECT_TILE_N;
constexpr int kDirectChannels = kDirectTileN == 24 ? 12 : 16;       // per thread
constexpr int kDirectWarpsN = kDirectTileN / kDirectChannels;       // warps side by side over the channels
constexpr int kDirectWarpsM = kThreads / 32 / kDirectWarpsN;        // and over the positions
constexpr int kDirectTileM = kDirectWarpsM * 32 * kDirectPositions;  // 512 positions at 16 or 24 channels, 128 at 64
// A phase's K at most (host-checked): its taps and weight rows fit 48 KB of static shared memory. 256 from a
// 32-wide tile down (a 3-channel image under a 4x4x4 window has 192: KernelBench level 2's 27).
constexpr int kDirectMaxK = kDirectTileN <= 32 ? 256 : 128;
// No padding and not transposed: every tap of an output position lies inside the input, so the loop needs no
// bounds test (a position past M reads the tensor's first elements instead, and its sums are never stored).
constexpr bool kDirectTapsInside = !kSpec.transposed && kSpec.padding[0] == 0 && kSpec.padding[1] == 0 &&
                                   kSpec.padding[2] == 0;
// k values whose inputs are loaded before any of their FMAs: 16 loads in flight a thread, not 4, so a warp waits
// for memory once per 4 k instead of once per k (at 25% occupancy nothing else hides it). With the bounds tests
// 2: at 4 their registers pushed ptxas past the 128 two CTAs an SM allow.
constexpr int kDirectLoadsAhead = kDirectTapsInside ? 4 : 2;
static_assert(kDirectTileN % kDirectChannels == 0 && kDirectChannels % 4 == 0 && kDirectWarpsM >= 1 &&
                  kThreads % (32 * kDirectWarpsN) == 0,
              "CIG_DIRECT_TILE_N: 16, 24, 32 or 64");
static_assert(kDirectPositions == 4, "the position list below is written out for 4");

// The weight as it is (fp32), re-laid B[group][phase][k][j] as the mma.sync path reads it.
__global__ void prepare_weight_direct(Geometry g, const float* __restrict__ w, float* out) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t total = int64_t(g.groups) * g.phases * g.kmax * g.cout_pad;
  if (i >= total) return;
  Tensor gOut = make_tensor(make_gmem_ptr(out), make_shape(total));
  gOut(i) = weight_element(g, w, i, /*k_major=*/false);
}

__global__ void __launch_bounds__(kThreads, 2)
    conv_direct_kernel(Geometry g, const float* __restrict__ x, const Tap* __restrict__ table,
                       const float* __restrict__ weight, const float* __restrict__ bias, const EpilogueInputs ep,
                       float* __restrict__ y) {
  CtaWork w(g);
  w.m0 = blockIdx.x * kDirectTileM;  // this path's tile, not the gather kernel's
  w.n0 = blockIdx.y * kDirectTileN;
  if (w.empty()) return;
  const int k_count = phase_taps(g, w.phase) * g.cin_g;  // <= g.kmax <= kDirectMaxK

  // The phase's tap entries and the CTA's columns of its weight rows: (k, j) with j contiguous. A 24-wide tile
  // can reach past the weight's 64-channel padding (channels 64..71 of a 64-channel layer): zeros there.
  __shared__ Tap s_taps[kDirectMaxK];
  __shared__ __align__(16) float s_weight[kDirectMaxK * kDirectTileN];
  Tensor sT = make_tensor(make_smem_ptr(s_taps), make_shape(Int<kDirectMaxK>{}));
  Tensor sW = make_tensor(make_smem_ptr(s_weight), make_layout(Shape<Int<kDirectMaxK>, Int<kDirectTileN>>{}, LayoutRight{}));
  Tensor gT = make_tensor(make_gmem_ptr(table + int64_t(w.phase) * g.kmax), make_shape(g.kmax));
  Tensor gW = make_tensor(make_gmem_ptr(weight + (int64_t(w.grp) * g.phases + w.phase) * g.kmax * int64_t(g.cout_pad)),
                          make_shape(g.kmax, g.cout_pad), make_stride(int64_t(g.cout_pad), _1{}));
  for (int i = threadIdx.x; i < k_count; i += kThreads) sT(i) = gT(i);
  for (int i = threadIdx.x; i < k_count * kDirectTileN; i += kThreads) {
    const int k = i / kDirectTileN, j = w.n0 + i % kDirectTileN;
    sW(k, i % kDirectTileN) = j < g.cout_pad ? gW(k, j) : 0.0f;
  }
  __syncthreads();

  // Thread (warp, lane): channels j0.. of the tile, positions m_first + 32 i.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int j0 = (warp % kDirectWarpsN) * kDirectChannels;
  const int m_first = (warp / kDirectWarpsN) * 32 * kDirectPositions + lane;
  const Gather at[kDirectPositions] = {Gather(g, w, x, table, m_first), Gather(g, w, x, table, m_first + 32),
                                       Gather(g, w, x, table, m_first + 64), Gather(g, w, x, table, m_first + 96)};
  // Where the taps inside the input need no test: each position's first input element (x itself past M).
  Tensor gRow = make_tensor<const float*>(Shape<Int<kDirectPositions>>{});
  CUTE_UNROLL
  for (int i = 0; i < kDirectPositions; ++i)
    gRow(i) = w.m0 + m_first + 32 * i < w.m_count ? at[i].x_img + at[i].lin : x;
  // The value tap entry k gives position i: a load, then (with padding) a select.
  auto input_at = [&](int k, int i) {
    const Tap t = sT(k);
    if constexpr (kDirectTapsInside) {
      return __ldg(gRow(i) + t.off);
    } else {
      bool ok;
      const float* src = at[i].source(g, t, x, ok);  // a valid address either way: load, then select
      const float loaded = __ldg(src);
      return ok ? loaded : 0.0f;
    }
  };
  Tensor acc = make_tensor<float>(Shape<Int<kDirectPositions>, Int<kDirectChannels>>{});
  clear(acc);
  auto multiply_add = [&](int k, const float* v) {
    CUTE_UNROLL
    for (int j = 0; j < kDirectChannels; ++j) {
      const float wj = sW(k, j0 + j);
      CUTE_UNROLL
      for (int i = 0; i < kDirectPositions; ++i) acc(i, j) = fmaf(v[i], wj, acc(i, j));
    }
  };
  int k = 0;
  for (; k + kDirectLoadsAhead <= k_count; k += kDirectLoadsAhead) {
    float v[kDirectLoadsAhead][kDirectPositions];
    CUTE_UNROLL
    for (int u = 0; u < kDirectLoadsAhead; ++u) {
      CUTE_UNROLL
      for (int i = 0; i < kDirectPositions; ++i) v[u][i] = input_at(k + u, i);
    }
    CUTE_UNROLL
    for (int u = 0; u < kDirectLoadsAhead; ++u) multiply_add(k + u, v[u]);
  }
  for (; k < k_count; ++k) {
    float v[kDirectPositions];
    CUTE_UNROLL
    for (int i = 0; i < kDirectPositions; ++i) v[i] = input_at(k, i);
    multiply_add(k, v);
  }

#if CIG_STATS
  // epilogue(acc (+ bias)) summed per (image, channel): when the warp's 128 positions are all of one image, each
  // lane's four values, then the warp's lanes in a fixed shuffle tree, then one atomic add a channel; else (an image's
  // edge inside the warp, or positions past M) each value on its own.
  Tensor gS = make_tensor(make_gmem_ptr(reinterpret_cast<double*>(y)),
                          make_layout(make_shape(int64_t(g.n) * g.groups * g.cout_g, Int<2>{}), LayoutRight{}));
  const int warp_first = w.m0 + m_first - lane, warp_last = warp_first + 32 * kDirectPositions - 1;
  const bool one_image = warp_last < w.m_count && warp_first / w.q_vol == warp_last / w.q_vol;
  int64_t first[kDirectPositions];
  CUTE_UNROLL
  for (int i = 0; i < kDirectPositions; ++i) {
    const int m = w.m0 + m_first + 32 * i;
    first[i] = m < w.m_count ? w.output_offset(g, m, w.grp * g.cout_g) : 0;
  }
  CUTE_UNROLL
  for (int j = 0; j < kDirectChannels; ++j) {
    const int jj = w.n0 + j0 + j;  // the same for the whole warp
    if (jj >= g.cout_g) continue;
    const int ch = w.grp * g.cout_g + jj;
    if (one_image) {
      double sum = 0, squares = 0;
      CUTE_UNROLL
      for (int i = 0; i < kDirectPositions; ++i) {
        const int64_t out_at = first[i] + int64_t(jj) * g.out_vol;
        const double v = epilogue(bias ? acc(i, j) + bias[ch] : acc(i, j), ch, out_at, ep);
        sum += v;
        squares += v * v;
      }
      CUTE_UNROLL
      for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        squares += __shfl_xor_sync(0xffffffffu, squares, offset);
      }
      if (lane == 0) {
        const int64_t row = int64_t(warp_first / w.q_vol) * g.groups * g.cout_g + ch;
        atomicAdd(&gS(row, 0), sum);
        atomicAdd(&gS(row, 1), squares);
      }
    } else {
      CUTE_UNROLL
      for (int i = 0; i < kDirectPositions; ++i) {
        const int m = w.m0 + m_first + 32 * i;
        if (m >= w.m_count) continue;
        const double v = epilogue(bias ? acc(i, j) + bias[ch] : acc(i, j), ch, first[i] + int64_t(jj) * g.out_vol, ep);
        const int64_t row = int64_t(m / w.q_vol) * g.groups * g.cout_g + ch;
        atomicAdd(&gS(row, 0), v);
        atomicAdd(&gS(row, 1), v * v);
      }
    }
  }
#else
  // epilogue(acc (+ bias)) to y: a warp's lanes store 32 consecutive positions of one channel plane.
  Tensor gY = make_tensor(make_gmem_ptr(y), make_shape(int64_t(g.n) * g.groups * g.cout_g * g.out_vol));
  CUTE_UNROLL
  for (int i = 0; i < kDirectPositions; ++i) {
    const int m = w.m0 + m_first + 32 * i;
    if (m >= w.m_count) continue;
    const int64_t first = w.output_offset(g, m, w.grp * g.cout_g);  // the offset is linear in the channel
    CUTE_UNROLL
    for (int j = 0; j < kDirectChannels; ++j) {
      const int jj = w.n0 + j0 + j;
      if (jj >= g.cout_g) continue;
      const int ch = w.grp * g.cout_g + jj;
      const int64_t out_at = first + int64_t(jj) * g.out_vol;
      gY(out_at) = epilogue(bias ? acc(i, j) + bias[ch] : acc(i, j), ch, out_at, ep);
    }
  }
#endif
}
#endif

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// Where the bias is among `num_inputs` inputs (kInputs), -1: none.
int bias_input(int32_t num_inputs) { return kInputs.num_inputs == 0 ? (num_inputs == 3 ? 2 : -1) : kInputs.bias; }

// Whether an epilogue operand t is the tensor its reading expects beside the output y (cout channels).
bool epilogue_operand_fits(const cutegen_tensor& t, EpilogueReads reads, const cutegen_tensor& y, int64_t cout) {
  if (t.dtype != CUTEGEN_FLOAT32 || !cutegen::is_contiguous(t)) return false;
  if (reads == EpilogueReads::element) {
    if (t.rank != y.rank) return false;
    for (int d = 0; d < y.rank; ++d)
      if (t.shape[d] != y.shape[d]) return false;
    return true;
  }
  return cutegen::numel(t) == (reads == EpilogueReads::channel ? cout : 1);
}

// The geometry from the tensors' shapes, or why not (0: fine). Every size the kernels hold in int32 is
// checked here.
int plan(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs, int32_t num_outputs,
         Geometry& g) {
  if (num_outputs != 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (kInputs.num_inputs == 0 ? num_inputs != 2 && num_inputs != 3 : num_inputs != kInputs.num_inputs)
    return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const cutegen_tensor &x = inputs[kInputs.x], &w = inputs[kInputs.weight], &y = outputs[0];
  const int rank = kSpec.dims + 2;
  if (x.rank != rank || w.rank != rank || y.rank != rank) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  for (const cutegen_tensor* t : {&x, &w, &y})
    if (t->dtype != kIoDtype || !cutegen::is_contiguous(*t)) return CUTEGEN_ERROR_UNSUPPORTED;
  if (CIG_IO_BF16 && kNumEpilogueOperands > 0) return CUTEGEN_ERROR_UNSUPPORTED;  // operands are read as fp32
  const int64_t groups = kSpec.groups, cin = x.shape[1], cout = y.shape[1];
  if (groups < 1 || cin % groups || cout % groups || y.shape[0] != x.shape[0]) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  const int64_t cin_g = cin / groups, cout_g = cout / groups;
  const int64_t w0 = kSpec.transposed ? cin : cout, w1 = kSpec.transposed ? cout_g : cin_g;
  if (w.shape[0] != w0 || w.shape[1] != w1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  if (const int at = bias_input(num_inputs); at >= 0) {
    const cutegen_tensor& b = inputs[at];
    if (b.rank != 1 || b.shape[0] != cout || b.dtype != kIoDtype) return CUTEGEN_ERROR_BAD_ARGUMENTS;
  }
  for (int i = 0; i < kNumEpilogueOperands; ++i) {
    const EpilogueOperand& o = kEpilogueOperands[i];
    if (o.input < 0 || o.input >= num_inputs || !epilogue_operand_fits(inputs[o.input], o.reads, y, cout))
      return CUTEGEN_ERROR_BAD_ARGUMENTS;
  }
  g.spec = kSpec;
  g.phases = g.phases_in(0) * g.phases_in(1) * g.phases_in(2);
  g.n = static_cast<int>(x.shape[0]);
  g.groups = static_cast<int>(groups);
  g.cin_g = static_cast<int>(cin_g);
  g.cout_g = static_cast<int>(cout_g);
  int64_t in_vol = 1, out_vol = 1, ker_vol = 1;
  for (int d = 0; d < 3; ++d) {
    const int a = d - (3 - kSpec.dims);  // the tensor's spatial index of dimension d, < 0 where it has none
    const int64_t in = a < 0 ? 1 : x.shape[2 + a], out = a < 0 ? 1 : y.shape[2 + a], k = a < 0 ? 1 : w.shape[2 + a];
    if (k < 1 || k > 16 || in < 1 || out < 0) return CUTEGEN_ERROR_UNSUPPORTED;
    // PyTorch's output size (a transposed convolution's output_padding, if any, is the remainder).
    const int s = kSpec.stride[d], p = kSpec.padding[d], dil = kSpec.dilation[d];
    if (!kSpec.transposed) {
      if (out != (in + 2 * p - dil * (k - 1) - 1) / s + 1) return CUTEGEN_ERROR_BAD_ARGUMENTS;
    } else {
      const int64_t extra = out - ((in - 1) * s - 2 * p + dil * (k - 1) + 1);
      if (extra < 0 || (extra >= s && extra >= dil)) return CUTEGEN_ERROR_BAD_ARGUMENTS;
    }
    g.in[d] = static_cast<int>(in);
    g.out[d] = static_cast<int>(out);
    g.ker[d] = static_cast<int>(k);
    in_vol *= in;
    out_vol *= out;
    ker_vol *= k;
  }
  if (cin_g * in_vol > INT32_MAX || x.shape[0] * cin * in_vol > (int64_t(1) << 40)) return CUTEGEN_ERROR_UNSUPPORTED;
  g.in_vol = static_cast<int>(in_vol);
  g.ker_vol = static_cast<int>(ker_vol);
  g.out_vol = out_vol;
  int64_t kmax = 0, mmax = 0;
  for (int phase = 0; phase < g.phases; ++phase) {
    int r[3];
    phase_coords(g, phase, r);
    kmax = std::max<int64_t>(kmax, round_up(int64_t(phase_taps(g, phase)) * cin_g, BK));
    mmax = std::max<int64_t>(mmax, g.n * int64_t(q_extent(g, 0, r[0])) * q_extent(g, 1, r[1]) * q_extent(g, 2, r[2]));
  }
  if (mmax > INT32_MAX - BM || kmax > INT32_MAX / BK) return CUTEGEN_ERROR_UNSUPPORTED;
  g.kmax = static_cast<int>(std::max<int64_t>(kmax, BK));
  g.cout_pad = static_cast<int>(round_up(cout_g, BN));
  g.mmax = static_cast<int>(mmax);
  if ((mmax + BM - 1) / BM > INT32_MAX || (g.cout_pad / BN) > 65535 || int64_t(g.groups) * g.phases > 65535)
    return CUTEGEN_ERROR_UNSUPPORTED;
  return CUTEGEN_OK;
}

struct Workspace {
  size_t table, big, small, total;
};
Workspace layout(const Geometry& g) {
  Workspace w;
  w.table = 0;
  const size_t table_bytes = round_up(int64_t(g.phases) * g.kmax * sizeof(Tap), 256);
  const size_t weight_bytes = round_up(int64_t(g.groups) * g.phases * g.kmax * int64_t(g.cout_pad) * 4, 256);
  w.big = table_bytes;
  w.small = w.big + weight_bytes;
  w.total = w.small + weight_bytes;
  return w;
}

// ---------------------------------------------------------------------------------------------
// The TMA-im2col path (CIG_TMA 1): dense forward convolutions on CUTLASS's SM90 implicit-GEMM convolution.
//
// Why: the gather kernel above feeds the tensor cores through registers, 4 bytes per cp.async, and tops
// out at 0.5-0.75x cuDNN on dense layers with many channels. Hopper's TMA has an im2col mode that loads a
// (output positions x channels) tile of an NHWC tensor for one filter tap in one instruction, zero-filling
// the padding, and CUTLASS's SM90 convolution collective builds its mainloop on it. TMA cannot split fp32
// into TF32 parts on the way, so one pre-pass re-lays the input as NHWC with C' channels,
//   [ big(x) for C channels | small(x) | big(x) | zeros up to C' = 3C rounded up to 32 ],
// and the weight as K x taps x C' with [ big(w) | big(w) | small(w) | zeros ]: ONE TF32 convolution over
// the C' channels then sums big*big + small*big + big*small, the three products of 3xTF32 (the idea of
// library/gemm_sm90_3xtf32.cu). Its output is NHWK (channels contiguous: the epilogue's TMA store
// needs that) in the workspace; a last pass transposes it to NCHW and applies the bias and `epilogue`.
// Traffic beside the convolution: the input read once and written three times, the output written and
// read once more and written once -- for problems/conv2d_3x3.py about 0.2 ms at HBM speed. Batches whose
// buffers would pass ~1 GiB run in chunks of images (Layout3).
//
// Accuracy: the tensor cores' adds inside wgmma truncate; the mainloop below adds each CIG_TMA_PROMOTE
// k-tiles' products (64 of K' by default) into the main accumulator with a round-to-nearest fp32 add,
// as the GEMM's promotion mainloop does (benchmarks/gemm_3xtf32_error_model.py models it).
//
// Transposed convolutions of stride 1 take the path as forward ones: ConvTranspose with stride 1, padding p
// and dilation d is the forward convolution of the same input with the window flipped in every dimension,
// the weight's two channel dimensions swapped, and padding d (k - 1) - p in front and that plus the
// output_padding behind (output o reads input i = o + p - k d; with t = k - 1 - k' that is o - (d (k - 1) - p)
// + t d). pack_weight reads the (C, K, taps) weight flipped; nothing else changes. A strided transposed
// convolution would read most taps as zeros here (the phases of the gather kernel skip them), and one whose
// padding passes d (k - 1) would crop, so both stay on the gather kernel.
//
// Limits (then the gather kernel runs): groups 1, forward or stride-1 transposed, C >= 8 (below, most of C'
// is padding), K % 4 == 0 (16-byte rows for the TMA store), and what CUTLASS's TMA im2col can address (its
// can_implement: padding, filter extent and corner ranges per dimension; M and the batch in int32).
#if CIG_TMA
}  // namespace conv_ig (reopened below): CUTLASS's headers go at file scope
#include <cutlass/kernel_hardware_info.hpp>  // the SM100 collective the builder header pulls in uses it unincluded
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/fast_math.h>
#include <cutlass/util/packed_stride.hpp>
namespace conv_ig {
namespace tma_path {

constexpr int kDims = kSpec.dims;
// The packed operands' type: TF32 values held as fp32 bits (TMA copies them as they are), or bf16.
// The packed operands follow kPolicy (bf16 for bf16 tensors).
using Operand = cute::conditional_t<kPolicy == 2, cutlass::bfloat16_t, cutlass::tfloat32_t>;
constexpr int kChannelTile = 128 / int(sizeof(Operand));  // K' per k-tile: one 128-byte swizzle row
constexpr int kAlign = 16 / int(sizeof(Operand));         // elements per 16-byte TMA access
constexpr int kParts = kPolicy == 0 ? 3 : 1;        // the channel copies one term needs (3xTF32: 3)
// CIG_TMA_PAIRED: per kChannelTile channels, a k-tile of big parts and one of small parts (strict only).
constexpr bool kPaired = CIG_TMA_PAIRED && kPolicy == 0;
using LayoutNxC = cute::conditional_t<
    kDims == 1, cutlass::layout::TensorNWC,
    cute::conditional_t<kDims == 2, cutlass::layout::TensorNHWC, cutlass::layout::TensorNDHWC>>;
using TileShape = Shape<Int<CIG_TMA_TILE_M>, Int<CIG_TMA_TILE_N>, Shape<Int<kChannelTile>>>;
using ClusterShape = Shape<Int<CIG_TMA_CLUSTER_M>, _1, _1>;

using NhwkEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    void, LayoutNxC, 4,  // no C source: D = the convolution
    float, LayoutNxC, 4, cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;

// CIG_TMA_NCHW: an operator-style epilogue (CUTLASS's Sm90TmaWarpSpecializedAdapter runs it in the consumer
// warpgroup after the mainloop) that writes each accumulator to y (N, K, spatial) at its NCHW place, the bias and
// the epilogue applied: GEMM row m is image m / out_vol of the chunk (FastDivmod) at position m % out_vol, GEMM
// column k the output channel. The M extent CUTLASS passes is the chunk's images x out_vol (linearised im2col).
struct NchwStore {
  using ElementC = void;
  using ElementD = Io;
  using ElementAccumulator = float;
  using StrideC = cute::Stride<int64_t, cute::_1, int64_t>;
  using StrideD = StrideC;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  struct SharedStorage {};
  using TensorStorage = SharedStorage;
  struct Arguments {
    Io* y = nullptr;           // the whole output; images from n0 on
    const Io* bias = nullptr;
    EpilogueInputs ep{};
    cutlass::FastDivmod out_vol{};  // positions per image
    int cout = 0, n0 = 0;
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

  CUTLASS_HOST_DEVICE NchwStore(Params const& p) : params(p) {}
  CUTLASS_DEVICE bool is_source_needed() { return false; }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl, cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char*) {
    const int M = static_cast<int>(cute::size<0>(problem_shape_mnkl));  // int32: layout_for checks
    const int N = static_cast<int>(cute::size<1>(problem_shape_mnkl));
    const int m0 = static_cast<int>(cute::get<0>(blk_coord_mnkl)) * int(cute::size<0>(blk_shape_mnk));
    const int k0 = static_cast<int>(cute::get<1>(blk_coord_mnkl)) * int(cute::size<1>(blk_shape_mnk));
    auto thread_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor coords = thread_mma.partition_C(
        make_identity_tensor(make_shape(cute::size<0>(blk_shape_mnk), cute::size<1>(blk_shape_mnk))));
    CUTE_UNROLL
    for (int i = 0; i < size(accumulators); ++i) {
      const int m = m0 + int(get<0>(coords(i))), k = k0 + int(get<1>(coords(i)));
      if (m >= M || k >= N) continue;
      int image, position;
      params.out_vol(image, position, m);
      const int64_t at = (int64_t(params.n0 + image) * params.cout + k) * int64_t(params.out_vol.divisor) + position;
      const float v = accumulators(i);
      params.y[at] = Io(epilogue(params.bias ? v + float(params.bias[k]) : v, k, at, params.ep));
    }
  }

  Params params;
};
using CollectiveEpilogue =
    cute::conditional_t<CIG_TMA_NCHW == 1, cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<NchwStore>,
                        NhwkEpilogue>;

using MainloopBase = typename cutlass::conv::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop,
    Operand, LayoutNxC, kAlign,  // the packed input, N(D)(H)W x C'
    Operand, LayoutNxC, kAlign,  // the packed weight, K x taps x C'
    float, TileShape, ClusterShape,
    cute::conditional_t<CIG_TMA_STAGES == 0,
                        cutlass::conv::collective::StageCountAutoCarveout<
                            static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
                        cutlass::conv::collective::StageCount<(CIG_TMA_STAGES == 0 ? 2 : CIG_TMA_STAGES)>>,
    cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;

// The collective's consumer with promotion: each k-tile's wgmmas accumulate into `chunk`, which is added
// to the main accumulator every CIG_TMA_PROMOTE k-tiles (and after the last). Stages are released as the
// base mainloop releases them -- all but the last K_PIPE_MMAS, which the kernel's mma_tail releases -- so
// the producer and mma_tail see the same pipeline as with the base mma.
struct PromotingMainloop : MainloopBase {
  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(typename MainloopBase::MainloopPipeline pipeline,
                          typename MainloopBase::PipelineState read_state, FrgTensorC& accum, int k_tile_count,
                          int thread_idx, typename MainloopBase::TensorStorage& shared_tensors,
                          typename MainloopBase::Params const&) {
    using Base = MainloopBase;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), typename Base::SmemLayoutA{});
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), typename Base::SmemLayoutB{});
    typename Base::TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA, MMA_M, MMA_K, PIPE)
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA, MMA_N, MMA_K, PIPE)
    Tensor chunk = make_fragment_like(accum);
    clear(accum);
    auto release_state = read_state;
    if constexpr (kPaired) {
      mma_paired(pipeline, read_state, release_state, accum, chunk, k_tile_count, tiled_mma, tCrA, tCrB);
      return;
    }
    int tiles_in_chunk = 0;
    tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
    CUTLASS_PRAGMA_NO_UNROLL
    for (int t = 0; t < k_tile_count; ++t) {
      pipeline.consumer_wait(read_state);
      const int stage = read_state.index();
      warpgroup_fence_operand(chunk);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
        cute::gemm(tiled_mma, tCrA(_, _, k_block, stage), tCrB(_, _, k_block, stage), chunk);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      if (++tiles_in_chunk == CIG_TMA_PROMOTE || t == k_tile_count - 1) {
        warpgroup_wait<0>();  // the chunk is complete: promote it with round-to-nearest adds
        warpgroup_fence_operand(chunk);
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(accum); ++i) accum(i) += chunk(i);
        tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
        tiles_in_chunk = 0;
      } else {
        warpgroup_wait<Base::K_PIPE_MMAS>();  // the k-tile before this one is done with its stage
        warpgroup_fence_operand(chunk);
      }
      if (t >= Base::K_PIPE_MMAS) {
        pipeline.consumer_release(release_state);
        ++release_state;
      }
      ++read_state;
    }
    warpgroup_fence_operand(accum);
  }

  // CIG_TMA_PAIRED: k-tiles 2p and 2p + 1 hold the big and the small parts of the same 32 channels of one tap
  // (A: the input's, B: the weight's). One commit group per pair: big.big + small.big + big.small. A pair's
  // stages are released once its group is known complete (the next pair's wait<1>, or a promotion's wait<0>);
  // as in mma() above, the last K_PIPE_MMAS stages are left to the kernel's mma_tail.
  template <class Pipeline, class State, class Accum, class Chunk, class TiledMma, class FragA, class FragB>
  CUTLASS_DEVICE void mma_paired(Pipeline& pipeline, State read_state, State release_state, Accum& accum, Chunk& chunk,
                                 int k_tile_count, TiledMma& tiled_mma, FragA& tCrA, FragB& tCrB) {
    using Base = MainloopBase;
    static_assert(Base::DispatchPolicy::Stages >= 4, "CIG_TMA_PAIRED: a pair in use and the previous one draining");
    constexpr int kPairsPerPromotion = CIG_TMA_PROMOTE > 1 ? CIG_TMA_PROMOTE / 2 : 1;
    const int pairs = k_tile_count / 2;  // even: the packed channels are whole pairs of k-tiles (layout_for)
    const int release_cap = k_tile_count - Base::K_PIPE_MMAS;
    int released = 0;
    auto release_to = [&](int n) {
      for (n = n < release_cap ? n : release_cap; released < n; ++released) {
        pipeline.consumer_release(release_state);
        ++release_state;
      }
    };
    int pairs_in_chunk = 0;
    tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
    CUTLASS_PRAGMA_NO_UNROLL
    for (int p = 0; p < pairs; ++p) {
      pipeline.consumer_wait(read_state);
      const int big = read_state.index();
      ++read_state;
      pipeline.consumer_wait(read_state);
      const int small = read_state.index();
      ++read_state;
      warpgroup_fence_operand(chunk);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
        cute::gemm(tiled_mma, tCrA(_, _, k_block, big), tCrB(_, _, k_block, big), chunk);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
        cute::gemm(tiled_mma, tCrA(_, _, k_block, small), tCrB(_, _, k_block, big), chunk);
        cute::gemm(tiled_mma, tCrA(_, _, k_block, big), tCrB(_, _, k_block, small), chunk);
      }
      warpgroup_commit_batch();
      if (++pairs_in_chunk == kPairsPerPromotion || p == pairs - 1) {
        warpgroup_wait<0>();
        warpgroup_fence_operand(chunk);
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(accum); ++i) accum(i) += chunk(i);
        tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
        pairs_in_chunk = 0;
        release_to(2 * (p + 1));
      } else {
        warpgroup_wait<1>();  // the previous pair's group is done with its stages
        warpgroup_fence_operand(chunk);
        release_to(2 * p);
      }
    }
    warpgroup_fence_operand(accum);
  }
};

using ProblemShape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, kDims>;
using ConvKernelBase = cutlass::conv::kernel::ConvUniversal<ProblemShape, PromotingMainloop, CollectiveEpilogue>;
// The kernel as launched: CUTLASS's device_kernel takes its __launch_bounds__ from these members.
struct ConvKernel : ConvKernelBase {
  static constexpr uint32_t MinBlocksPerMultiprocessor = CIG_TMA_MIN_CTAS;
};

// The forward convolution's padding in front of dimension d (D, H, W) and behind it: the module's for a
// forward convolution; for a stride-1 transposed one d (k - 1) - p in front, and behind that plus the
// output_padding (the output's extent beyond in + d (k - 1) - 2p). Negative where the transposed
// convolution's padding passes d (k - 1) (layout_for keeps those on the gather kernel).
int pad_front(const Geometry& g, int d) {
  return kSpec.transposed ? kSpec.dilation[d] * (g.ker[d] - 1) - kSpec.padding[d] : kSpec.padding[d];
}
int pad_back(const Geometry& g, int d) {
  if (!kSpec.transposed) return kSpec.padding[d];
  const int extra = g.out[d] - (g.in[d] + kSpec.dilation[d] * (g.ker[d] - 1) - 2 * kSpec.padding[d]);
  return pad_front(g, d) + extra;
}

// The problem as CUTLASS sees it for `images` images: NDHWC extents in the tensor's own order (no D for 2-d,
// no D, H for 1-d).
ProblemShape problem_shape(const Geometry& g, int c_packed, int images) {
  typename ProblemShape::TensorExtent act{}, flt{};
  typename ProblemShape::ShapePadding front{}, back{}, stride{}, dilation{};
  act[0] = images;
  flt[0] = g.cout_g;
  for (int i = 0; i < kDims; ++i) {
    const int d = 3 - kDims + i;  // Geometry keeps (D, H, W), 1 in the dimensions the convolution lacks
    act[1 + i] = g.in[d];
    flt[1 + i] = g.ker[d];
    front[i] = pad_front(g, d);
    back[i] = pad_back(g, d);
    stride[i] = kSpec.stride[d];
    dilation[i] = kSpec.dilation[d];
  }
  act[kDims + 1] = c_packed;
  flt[kDims + 1] = c_packed;
  return ProblemShape(cutlass::conv::Mode::kCrossCorrelation, act, flt, front, back, stride, dilation, 1);
}

typename ConvKernel::Arguments arguments(const ProblemShape& shape, const Operand* x_packed,
                                         const Operand* w_packed, [[maybe_unused]] float* d,
                                         [[maybe_unused]] const NchwStore::Arguments& nchw = {}) {
#if CIG_TMA_NCHW
  typename ConvKernel::Arguments args{};
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = shape;
  args.mainloop.ptr_A = x_packed;
  args.mainloop.ptr_B = w_packed;
  args.epilogue = nchw;
  return args;
#else
  typename ConvKernel::StrideC stride_c{};
  typename ConvKernel::StrideD stride_d{};
  // D's output positions step by its packed N(D)(H)W strides, innermost first; its channels are mode 1 (unit).
  cute::for_each(cute::make_seq<cute::rank<0>(typename ConvKernel::StrideD{})>{}, [&](auto i) {
    cute::get<0, i>(stride_c) = shape.stride_C[ProblemShape::RankT - 2 - i];
    cute::get<0, i>(stride_d) = shape.stride_C[ProblemShape::RankT - 2 - i];
  });
  typename ConvKernel::Arguments args{};
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = shape;
  args.mainloop.ptr_A = x_packed;
  args.mainloop.ptr_B = w_packed;
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = stride_c;
  args.epilogue.ptr_D = d;
  args.epilogue.dD = stride_d;
  return args;
#endif
}

// Where the path's buffers are in the workspace, or ok = false: this convolution stays on the gather kernel.
// The packed input and the NHWK output are for `batch_chunk` images: a call runs the images in chunks
// through them, so that the workspace stays near kChunkBytes (KernelBench 55's would be 5.4 GB whole), or
// CIG_TMA_CHUNK_IMAGES images where that is set.
constexpr int64_t kChunkBytes = int64_t(1) << 30;
struct Layout3 {
  bool ok = false;
  int c_packed = 0, batch_chunk = 0;
  size_t w_packed = 0, x_packed = 0, d = 0, total = 0;
};
Layout3 layout_for(const Geometry& g) {
  Layout3 l;
  if (g.groups != 1 || g.cin_g < 8 || g.cout_g % 4 != 0 || g.n > 65535) return l;
  for (int d = 0; d < 3; ++d)
    if (kSpec.transposed && (kSpec.stride[d] != 1 || pad_front(g, d) < 0)) return l;
  l.c_packed = static_cast<int>(kPaired ? 2 * round_up(int64_t(g.cin_g), kChannelTile)
                                         : round_up(kParts * int64_t(g.cin_g), kChannelTile));
  const int64_t image_in = round_up(int64_t(g.in_vol) * l.c_packed * int64_t(sizeof(Operand)), 256),
                image_out = round_up(g.out_vol * g.cout_g * 4, 256);
  const int64_t images = CIG_TMA_CHUNK_IMAGES > 0 ? CIG_TMA_CHUNK_IMAGES : kChunkBytes / (image_in + image_out);
  l.batch_chunk = static_cast<int>(std::clamp<int64_t>(images, 1, g.n));
  if (int64_t(l.batch_chunk) * g.out_vol > INT32_MAX || int64_t(g.in_vol) * g.cin_g > INT32_MAX) return l;
  l.w_packed = 0;
  l.x_packed = round_up(int64_t(g.cout_g) * g.ker_vol * l.c_packed * int64_t(sizeof(Operand)), 256);
  l.d = l.x_packed + l.batch_chunk * image_in;
  // CIG_TMA_NCHW stores to y: no NHWK buffer (the chunk stays the one counted with it, so the workspace is never
  // more than the seed planned).
  l.total = l.d + (CIG_TMA_NCHW == 1 ? 0 : l.batch_chunk * image_out);
  if (l.total > (size_t(4) << 30)) return l;  // the harness's workspace ceiling (docs/kernel-contract.md)
  // Every chunk is the full one but perhaps the last: both shapes must be CUTLASS's to take.
  for (const int images : {l.batch_chunk, g.n % l.batch_chunk})
    if (images > 0 && !ConvKernel::can_implement(arguments(problem_shape(g, l.c_packed, images), nullptr, nullptr, nullptr)))
      return l;
  l.ok = true;
  return l;
}

// v as the packed operand: fp32 bits rounded to TF32 (to nearest: tf32_bits), or bf16 (to nearest).
__device__ __forceinline__ Operand to_operand(float v) {
  if constexpr (kPolicy == 2) return Operand(v);
  else return Operand::bitcast(tf32_bits(v));
}

// x (N, C, P) -> (N, P, C'): strict [big | small | big | 0] (C' = 3C rounded up), or with CIG_TMA_PAIRED
// [big | small] per 32 channels (C' = 2C rounded up to 64, zeros past C); tf32 and bf16 [x | 0]. Through a
// 32 x 32 shared tile so that the read (along P) and the writes (along C) both coalesce.
// blockIdx: (P tile, C tile, image).
__global__ void __launch_bounds__(256) pack_input(const Io* __restrict__ x, int C, int64_t P, int c_packed,
                                                  Operand* __restrict__ out) {
  const int64_t n = blockIdx.z;
  Tensor mX = make_tensor(make_gmem_ptr(x + n * C * P), make_shape(C, P), make_stride(P, _1{}));
  Tensor mO = make_tensor(make_gmem_ptr(out + n * P * c_packed), make_shape(P, c_packed),
                          make_stride(int64_t(c_packed), _1{}));
  __shared__ float smem[32 * 33];
  Tensor sT = make_tensor(make_smem_ptr(smem), Layout<Shape<_32, _32>, Stride<Int<33>, _1>>{});  // (c, p), padded
  const int64_t p0 = int64_t(blockIdx.x) * 32;
  const int c0 = blockIdx.y * 32, lane = threadIdx.x % 32, row = threadIdx.x / 32;
  CUTE_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int c = c0 + row + 8 * i;
    const int64_t p = p0 + lane;
    sT(row + 8 * i, lane) = (c < C && p < P) ? float(mX(c, p)) : 0.0f;
  }
  __syncthreads();
  CUTE_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int64_t p = p0 + row + 8 * i;
    if (p >= P) continue;
    const int c = c0 + lane;
    if constexpr (kPaired) {  // this block's 32 channels: big at 2 c0, small at 2 c0 + 32; zeros past C
      const float v = c < C ? sT(lane, row + 8 * i) : 0.0f;
      const float big = __uint_as_float(tf32_bits(v));
      mO(p, 2 * c0 + lane) = to_operand(v);
      mO(p, 2 * c0 + 32 + lane) = to_operand(v - big);
      continue;
    }
    if (c < C) {
      const float v = sT(lane, row + 8 * i);
      mO(p, c) = to_operand(v);
      if constexpr (kParts == 3) {
        const float big = __uint_as_float(tf32_bits(v));
        mO(p, C + c) = to_operand(v - big);  // the small part: v - big is exact
        mO(p, 2 * C + c) = to_operand(big);
      }
    }
    if (blockIdx.y == 0)
      for (int z = kParts * C + lane; z < c_packed; z += 32) mO(p, z) = Operand(0.0f);  // the channel padding
  }
}

// w (K, C, taps) -> (K, taps, C'): strict [big | big | small | 0] (CIG_TMA_PAIRED: [big | small] per 32
// channels), tf32 and bf16 [w | 0]: each output row is one (k, tap). A stride-1 transposed convolution's weight is (C, K, taps), read with its window flipped:
// flipping every dimension of the window reverses the row-major tap index.
__global__ void __launch_bounds__(256) pack_weight(const Io* __restrict__ w, int K, int C, int taps,
                                                   int c_packed, Operand* __restrict__ out) {
  // (k, c, tap) -> w[k][c][tap], or w[c][k][taps - 1 - tap] from the last tap of w[0][0] on.
  const int64_t tap_stride = kSpec.transposed ? -1 : 1;
  Tensor mW = make_tensor(make_gmem_ptr(w + (kSpec.transposed ? taps - 1 : 0)), make_shape(K, C, taps),
                          kSpec.transposed ? make_stride(int64_t(taps), int64_t(K) * taps, tap_stride)
                                           : make_stride(int64_t(C) * taps, int64_t(taps), tap_stride));
  Tensor mO = make_tensor(make_gmem_ptr(out), make_shape(K, taps, c_packed),
                          make_stride(int64_t(taps) * c_packed, c_packed, _1{}));
  const int64_t total = int64_t(K) * taps * c_packed;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int j = static_cast<int>(i % c_packed);
    const int64_t row = i / c_packed;
    const int tap = static_cast<int>(row % taps), k = static_cast<int>(row / taps);
    Operand r = Operand(0.0f);
    if constexpr (kPaired) {
      const int c = (j / 64) * 32 + j % 32;
      if (c < C) {
        const float v = float(mW(k, c, tap));
        r = (j % 64) < 32 ? to_operand(v) : to_operand(v - __uint_as_float(tf32_bits(v)));
      }
    } else if (j < kParts * C) {
      const float v = float(mW(k, j % C, tap));
      const float big = __uint_as_float(tf32_bits(v));
      r = j < 2 * C ? to_operand(v) : to_operand(v - big);  // kParts 1: j < C, the value itself
    }
    mO(k, tap, j) = r;
  }
}

// d (images, P, K) -> y (N, K, P) from image n0 on: the bias and the epilogue applied, through a 32 x 32
// shared tile.
__global__ void __launch_bounds__(256) unpack_output(const float* __restrict__ d, int K, int64_t P, int n0,
                                                     const Io* __restrict__ bias, const EpilogueInputs ep,
                                                     Io* __restrict__ y) {
  const int64_t n = n0 + int64_t(blockIdx.z);
  Tensor mD = make_tensor(make_gmem_ptr(d + int64_t(blockIdx.z) * P * K), make_shape(P, K), make_stride(int64_t(K), _1{}));
  Tensor mY = make_tensor(make_gmem_ptr(y + n * K * P), make_shape(K, P), make_stride(P, _1{}));
  __shared__ float smem[32 * 33];
  Tensor sT = make_tensor(make_smem_ptr(smem), Layout<Shape<_32, _32>, Stride<Int<33>, _1>>{});  // (p, k), padded
  const int64_t p0 = int64_t(blockIdx.x) * 32;
  const int k0 = blockIdx.y * 32, lane = threadIdx.x % 32, row = threadIdx.x / 32;
  CUTE_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int64_t p = p0 + row + 8 * i;
    const int k = k0 + lane;
    sT(row + 8 * i, lane) = (p < P && k < K) ? mD(p, k) : 0.0f;
  }
  __syncthreads();
  CUTE_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int k = k0 + row + 8 * i;
    const int64_t p = p0 + lane;
    if (k >= K || p >= P) continue;
    const float v = sT(lane, row + 8 * i);
    const int64_t at = (n * K + k) * P + p;  // the output element's offset, as the epilogue is told
    mY(k, p) = Io(epilogue(bias ? v + float(bias[k]) : v, k, at, ep));  // bf16 tensors: rounded once, here
  }
}

// The kernel launched with its cluster (CIG_TMA_CLUSTER_M x 1): cudaLaunchKernelExC, since CUTLASS's launcher
// would bring its std::cout error paths. The grid's M extent is rounded up to whole clusters by CUTLASS.
cudaError_t launch(const typename ConvKernel::Params& params, int smem, cudaStream_t stream) {
  cudaLaunchConfig_t config{};
  config.gridDim = ConvKernel::get_grid_shape(params);
  config.blockDim = ConvKernel::get_block_shape();
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute cluster[1];
  cluster[0].id = cudaLaunchAttributeClusterDimension;
  cluster[0].val.clusterDim.x = CIG_TMA_CLUSTER_M;
  cluster[0].val.clusterDim.y = 1;
  cluster[0].val.clusterDim.z = 1;
  config.attrs = cluster;
  config.numAttrs = 1;
  auto params_copy = params;
  void* kernel_args[] = {&params_copy};
  return cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&cutlass::device_kernel<ConvKernel>), kernel_args);
}

int forward(const Geometry& g, const Layout3& l, const Io* x, const Io* w, const Io* bias, const EpilogueInputs& ep,
            Io* y, char* ws, cudaStream_t stream) {
  Operand* w_packed = reinterpret_cast<Operand*>(ws + l.w_packed);
  Operand* x_packed = reinterpret_cast<Operand*>(ws + l.x_packed);
  float* d = reinterpret_cast<float*>(ws + l.d);
  const int64_t p_in = g.in_vol, p_out = g.out_vol;
  const int64_t w_total = int64_t(g.cout_g) * g.ker_vol * l.c_packed;
  pack_weight<<<static_cast<unsigned>(std::min<int64_t>((w_total + 255) / 256, 4096)), 256, 0, stream>>>(
      w, g.cout_g, g.cin_g, g.ker_vol, l.c_packed, w_packed);
  auto* kernel = &cutlass::device_kernel<ConvKernel>;
  constexpr int smem = ConvKernel::SharedStorageSize;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); e != cudaSuccess)
    return static_cast<int>(e);
  for (int n0 = 0; n0 < g.n; n0 += l.batch_chunk) {
    const int images = std::min(l.batch_chunk, g.n - n0);
    pack_input<<<dim3(static_cast<unsigned>((p_in + 31) / 32), static_cast<unsigned>((g.cin_g + 31) / 32),
                      static_cast<unsigned>(images)),
                 256, 0, stream>>>(x + int64_t(n0) * g.cin_g * p_in, g.cin_g, p_in, l.c_packed, x_packed);
    NchwStore::Arguments nchw{};
    if constexpr (CIG_TMA_NCHW == 1)
      nchw = {y, bias, ep, cutlass::FastDivmod(static_cast<int>(p_out)), g.cout_g, n0};
    const typename ConvKernel::Arguments args =
        arguments(problem_shape(g, l.c_packed, images), x_packed, w_packed, d, nchw);
    if (!ConvKernel::can_implement(args)) return CUTEGEN_ERROR_UNSUPPORTED;
    // CUTLASS's own workspace is 0 bytes for this kernel; the TMA descriptors are encoded here, per chunk.
    const typename ConvKernel::Params params = ConvKernel::to_underlying_arguments(args, nullptr);
    if (cudaError_t e = launch(params, smem, stream); e != cudaSuccess) return static_cast<int>(e);
    if constexpr (CIG_TMA_NCHW == 0)
      unpack_output<<<dim3(static_cast<unsigned>((p_out + 31) / 32), static_cast<unsigned>((g.cout_g + 31) / 32),
                           static_cast<unsigned>(images)),
                      256, 0, stream>>>(d, g.cout_g, p_out, n0, bias, ep, y);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace tma_path
#endif  // CIG_TMA

}  // namespace conv_ig
using namespace conv_ig;

extern "C" size_t cutegen_workspace_bytes(const cutegen_tensor* inputs, int32_t num_inputs,
                                          const cutegen_tensor* outputs, int32_t num_outputs) {
  Geometry g{};
  if (plan(inputs, num_inputs, outputs, num_outputs, g) != CUTEGEN_OK) return 0;
#if CIG_TMA
  // The shapes alone decide the path, so the size asked here is the size the call uses.
  if (const tma_path::Layout3 l = tma_path::layout_for(g); l.ok) return l.total;
#endif
  return CIG_IO_BF16 ? 0 : layout(g).total;  // bf16 tensors: the TMA path or nothing
}

extern "C" int cutegen_forward_ws(const cutegen_tensor* inputs, int32_t num_inputs, const cutegen_tensor* outputs,
                                  int32_t num_outputs, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  Geometry g{};
  if (int rc = plan(inputs, num_inputs, outputs, num_outputs, g); rc != CUTEGEN_OK) return rc;
  if (g.n == 0 || g.out_vol == 0 || g.cout_g == 0) return CUTEGEN_OK;
  char* base = static_cast<char*>(workspace);
  const int bias_at = bias_input(num_inputs);
  EpilogueInputs ep{};
  for (int i = 0; i < kNumEpilogueOperands; ++i)
    ep.p[i] = static_cast<const float*>(inputs[kEpilogueOperands[i].input].data);
#if CIG_TMA
  if (const tma_path::Layout3 l = tma_path::layout_for(g); l.ok) {
    if (workspace_bytes < l.total) return CUTEGEN_ERROR_BAD_ARGUMENTS;
    return tma_path::forward(g, l, static_cast<const Io*>(inputs[kInputs.x].data),
                             static_cast<const Io*>(inputs[kInputs.weight].data),
                             bias_at >= 0 ? static_cast<const Io*>(inputs[bias_at].data) : nullptr, ep,
                             static_cast<Io*>(outputs[0].data), base, stream);
  }
#endif
#if CIG_IO_BF16
  return CUTEGEN_ERROR_UNSUPPORTED;  // bf16 tensors: the gather kernel reads fp32 only
#else
  const Workspace ws = layout(g);
  Tap* table = reinterpret_cast<Tap*>(base + ws.table);
  float* big = reinterpret_cast<float*>(base + ws.big);
  float* small = reinterpret_cast<float*>(base + ws.small);
  const float* x = static_cast<const float*>(inputs[kInputs.x].data);
  const float* w = static_cast<const float*>(inputs[kInputs.weight].data);
  const float* bias = bias_at >= 0 ? static_cast<const float*>(inputs[bias_at].data) : nullptr;
  float* y = static_cast<float*>(outputs[0].data);
  if (workspace_bytes < ws.total) return CUTEGEN_ERROR_BAD_ARGUMENTS;

  const int64_t table_entries = int64_t(g.phases) * g.kmax;
  prepare_taps<<<static_cast<unsigned>((table_entries + 255) / 256), 256, 0, stream>>>(g, table);
#if CIG_DIRECT
  if (CIG_STATS && g.kmax > kDirectMaxK) return CUTEGEN_ERROR_UNSUPPORTED;  // statistics: the direct path only
  if (g.kmax <= kDirectMaxK) {  // larger K: the gather kernel below, whose MMAs then pay for its pipeline
    const int64_t weights = int64_t(g.groups) * g.phases * g.kmax * g.cout_pad;
    prepare_weight_direct<<<static_cast<unsigned>((weights + 255) / 256), 256, 0, stream>>>(g, w, big);
    const dim3 grid(static_cast<unsigned>((int64_t(g.mmax) + kDirectTileM - 1) / kDirectTileM),
                    static_cast<unsigned>((g.cout_g + kDirectTileN - 1) / kDirectTileN),
                    static_cast<unsigned>(g.groups * g.phases));
    conv_direct_kernel<<<grid, kThreads, 0, stream>>>(g, x, table, big, bias, ep, y);
    return static_cast<int>(cudaGetLastError());
  }
#endif
  const int64_t weights = int64_t(g.groups) * g.phases * g.kmax * g.cout_pad;
  prepare_weight<<<static_cast<unsigned>((weights + 255) / 256), 256, 0, stream>>>(g, w, big, small);

  dim3 grid(static_cast<unsigned>((g.mmax + BM - 1) / BM), static_cast<unsigned>(g.cout_pad / BN),
            static_cast<unsigned>(g.groups * g.phases));
#if CIG_WGMMA
  // Two warpgroups, one 64-row wgmma each per k-block: the 128 x BN tile.
  auto mma = make_tiled_mma(GMMA::ss_op_selector<tfloat32_t, tfloat32_t, float, Shape<_64, Int<BN>, _8>>(),
                            Layout<Shape<_2, _1, _1>>{});
  auto kernel = conv_wgmma_kernel<decltype(mma)>;
  constexpr int smem_bytes = kWgmmaSmemBytes, threads = kWsThreads;
#else
  // 4 x 2 warps of the m16n8k8 TF32 atom: a 64 x 16 step repeated 2 x (BN / 16) times over the 128 x BN
  // tile, so a warp splits 8 values of A per k-block of 8 for 4 x (BN / 64) x 2 x 3 MMAs.
  auto mma = make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{}, Layout<Shape<_4, _2, _1>>{});
  auto kernel = conv_kernel<decltype(mma)>;
  constexpr int smem_bytes = kSmemBytes, threads = kThreads;
#endif
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
      e != cudaSuccess)
    return static_cast<int>(e);
  kernel<<<grid, threads, smem_bytes, stream>>>(g, x, table, big, small, bias, ep, y, mma);
  return static_cast<int>(cudaGetLastError());
#endif
}
