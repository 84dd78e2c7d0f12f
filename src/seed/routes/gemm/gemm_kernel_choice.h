#pragma once
// Which kernel a matrix product's seed is (gemm_plan.h: GemmKernel). One decision, made once per plan by the
// matchers, so `cutegen seed`, the generated source and bench's seed column all name the same kernel.
// The generic tiled GEMM (gemm_kernel.cu.in) is right for every plan but was measured far from eager
// PyTorch on an H200 where the product is not its shape: a matrix-vector product (KernelBench 4: 158 ms
// against eager's 2.38 ms; the tiled kernel computes a 64-wide tile to keep one column) and a small output
// with a long K (KernelBench 6, M = N = 256, K = 524288: 16 CTAs of 64x64 for 132 SMs, 63.5 ms against 1.33).
#include <cstdint>
#include <string>

#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

// Split K when K is at least this many times the larger output side (splitting a short K only adds the
// second kernel's pass over the slices).
inline constexpr int64_t kSplitKMinDepth = 8;
// A slice has at least this much of K (16 of the tiled GEMM's default k-steps), so a CTA's fixed costs --
// its tile's stores to the workspace, the launch -- stay small against its product.
inline constexpr int64_t kSplitKMinSlice = 256;
// The GEMM_SPLIT_K knob's values; the default is chosen from the shape (split_k_slices).
inline constexpr int64_t kSplitKMax = 64;

// "" when the plan is a plain product with a vector operand the GEMV reads as contiguous rows: N == 1 with
// A (M, K) row-major (B (K, 1), (K,) or a transposed (1, K): the same K contiguous floats), or M == 1 with
// B given as (N, K) row-major (x @ W.T). Else why not.
std::string gemv_refusal(const GemmPlan& plan);

// "" when the plan is a plain unbatched product with fewer than kLibraryGemmMinTiles output tiles of
// 128x128 and K >= kSplitKMinDepth * max(M, N). Else why not (an epilogue, a mask or a batch: the slices are
// summed in a second kernel that stores the sum as it is).
std::string split_k_refusal(const GemmPlan& plan);

// The skinny 3xTF32 kernel (named for the few-row products it was first written for; it takes any M) splits the
// weight in shared memory as it streams, where the library GEMM's pre-pass writes three split copies of it, seven
// times its bytes of traffic: a quarter of the library's time on level 2's 1024 x 8192 x 8192 on an H100, and
// over 4 GiB of copies for a 32768^2 weight (55, 56, 59). A plain product (no epilogue) of more rows than this
// stays on the library GEMM's own file: judged at 2x eager on level 1's plain products, and the kernel a chain's
// products are (gemm_then, prologue_then).
inline constexpr int64_t kSkinnyMaxPlainRows = 256;
// It wants a K at least this long, so the weight's stream, not A's pre-pass and the launch, is the work.
inline constexpr int64_t kSkinnyMinK = 512;

// "" when the skinny 3xTF32 kernel takes the plan: one unbatched product of rank-2 matrices, A (M, K) as
// given and B given (N, K) row-major (x @ W.T, nn.Linear), M <= kSkinnyMaxPlainRows unless an epilogue follows,
// K >= kSkinnyMinK and a multiple of 4 (16-byte rows), at least kLibraryGemmMinTiles tiles of 128 x 128, and no
// mask or norm (an epilogue and a row reduction it fuses). Else why not.
std::string skinny_refusal(const GemmPlan& plan);
// The skinny kernel's workspace for the plan: A's big and small copies and a row reduction's partials, in bytes.
int64_t skinny_workspace_bytes(const GemmPlan& plan);

// The default number of K slices for a split_k plan: the smallest power of two that gives the tiled GEMM's
// default 64x64 tiles two CTAs per SM of an H200 (132 SMs), at most kSplitKMax and at most K / kSplitKMinSlice.
int64_t split_k_slices(const GemmPlan& plan);

// Where the plan's kernel will run: alone (or as a chain's head), or as a later step of a chain, which the skinny
// kernel's file (the tiled template's) cannot be.
enum class GemmRole { alone, chain_step };

// Sets plan.kernel (the fold, GEMV, the skinny kernel unless `role` is a chain step, the library GEMM, split K, else
// the tiled GEMM), plan.split_k and plan.kernel_reason.
void choose_gemm_kernel(GemmPlan& plan, GemmRole role = GemmRole::alone);

}  // namespace cutegen::seed
