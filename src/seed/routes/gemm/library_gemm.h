#pragma once
// The seed of a large plain fp32 matrix product: the library's 3xTF32 GEMM itself
// (examples/kernels/gemm_sm90_3xtf32.cu, compiled in as text), not the seed's own CUDA-core GEMM
// (gemm_kernel.h). On an H200 the seed GEMM ran KernelBench's 4096^3 product in 8.8 ms (0.3x eager) and
// the library kernel in 1.39 ms (2.0x eager) at strict fp32 accuracy (benchmarks/library.md).
#include <string>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

// Output tiles of 128 x 128 (the library's default GX_TILE_M x GX_TILE_N) that a product needs for the
// library kernel: half of an H200's 132 SMs. Below that most SMs idle; with a long K the product takes the
// tiled GEMM with K split over CTAs instead (gemm_kernel_choice.h; KernelBench 6: M = N = 256, K = 524288).
inline constexpr long kLibraryGemmMinTiles = 66;

// "" when the plan is a product the library kernel takes and fills the GPU with: no epilogue, mask or
// batch; two rank-2 fp32 operands, a left operand of higher rank whose leading dimensions fold into M, or
// a batch (L, M, K) @ (L, K, N) (the library's Matrix views), that are the contract's inputs 0 and 1 in that
// order (make_plan reads
// inputs[0] @ inputs[1]); sizes within int32 / 4; its
// workspace within the judge's 4 GiB cap; at least kLibraryGemmMinTiles output tiles. Else why not.
std::string library_gemm_refusal(const GemmPlan& plan);

// The candidate: a header saying what and why, then the library source with kTransA / kTransB set from
// the plan (the library would guess them from the shapes, which a square A.T @ B cannot tell apart from
// A @ B). Error when the library file no longer has those two lines as the seed expects.
Result<std::string> generate_library_gemm_kernel(const GemmPlan& plan, const CommentText& problem);
// The same from a given library text (the tests' way to show that a changed library file is an Error).
Result<std::string> generate_library_gemm_kernel(const GemmPlan& plan, const CommentText& problem,
                                                 std::string library);

}  // namespace cutegen::seed
