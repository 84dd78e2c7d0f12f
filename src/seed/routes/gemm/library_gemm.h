#pragma once
// The seed of a large plain fp32 matrix product: the library's 3xTF32 GEMM itself
// (library/gemm_sm90_3xtf32.cu, compiled in as text), not the seed's own CUDA-core GEMM
// (gemm_kernel.h). On an H200 the seed GEMM ran KernelBench's 4096^3 product in 8.8 ms (0.3x eager) and
// the library kernel in 1.39 ms (2.0x eager) at strict fp32 accuracy (benchmarks/results.md).
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

// Output tiles of 128 x 128 (the library's default GX_TILE_M x GX_TILE_N) that a product needs for the
// library kernel: half of an H200's 132 SMs. Below that most SMs idle; with a long K the product takes the
// tiled GEMM with K split over CTAs instead (gemm_kernel_choice.h; KernelBench 6: M = N = 256, K = 524288).
inline constexpr long kLibraryGemmMinTiles = 66;

// "" when the plan is a product the library kernel takes and fills the GPU with: no mask; two rank-2 fp32
// operands, a left operand of higher rank whose leading dimensions fold into M, or (without an epilogue) a
// batch (L, M, K) @ (L, K, N) (the library's Matrix views); sizes within int32 / 4; its workspace within the
// judge's 4 GiB cap; at least kLibraryGemmMinTiles output tiles. Else why not. The same tile rule holds with
// an epilogue: the split pre-pass and a persistent kernel over fewer tiles than half the SMs lose to the tiled
// GEMM's many small CTAs, and an epilogue changes neither side of that.
std::string library_gemm_refusal(const GemmPlan& plan);

// "" when a plan on the library kernel can take the GEMM of a looser `precision` policy instead of the 3xTF32
// one: the TF32 GEMM (library/gemm_sm90_tf32.cu, one TF32 product per term) or the bf16 GEMM
// (library/gemm_sm90_bf16.cu, operands rounded to bf16, fp32 accumulation), each a plain product of two rank-2
// fp32 matrices with no epilogue, mask or batch, and sizes their TMA rows take (tf32: N a multiple of 4; bf16: M,
// N and K multiples of 8, and neither operand transposed). Else why not (strict: always a reason).
std::string library_gemm_precision_refusal(const GemmPlan& plan, Precision precision);
// "library 3xTF32 GEMM", "library TF32 GEMM" or "library bf16 GEMM": the file the plan's library_precision picks.
std::string_view library_gemm_name(const GemmPlan& plan);

// The library kernel's workspace for the plan's product (the split operands, a padded output when N % 4 != 0,
// a row reduction's (M, N) values), in bytes.
int64_t library_gemm_workspace_bytes(const GemmPlan& plan);
// The library file's text (library/gemm_sm90_3xtf32.cu, compiled in).
const char* library_gemm_text();
// The library file the plan's library_precision picks, as compiled in.
const char* library_gemm_text(const GemmPlan& plan);
// The plan's output tiles of 128 x 128 (the library's default GX_TILE_M x GX_TILE_N), over the batch.
int64_t library_gemm_tiles(const GemmPlan& plan);
// "(M, K) row-major" or "(K, M) row-major (transposed in forward())": how the header names an operand.
std::string library_operand_layout(bool transposed, const char* plain, const char* swapped);
// The library file's kTransA / kTransB lines set from the plan; an Error when the file lost one of them.
// (The plain seed also sets where A and B are among the contract's inputs when they are not inputs 0 and 1 of
// two -- a product that is a step of a chain reads a later forward input: attention's weights @ value -- by
// rewriting the two lines of make_plan that read them; the epilogue seed's own entry points read them so.)
Status set_library_transposes(const GemmPlan& plan, std::string& library, const char* seed_file);

// The candidate: a header saying what and why, then the library source with kTransA / kTransB set from
// the plan (the library would guess them from the shapes, which a square A.T @ B cannot tell apart from
// A @ B). Error when the library file no longer has those two lines as the seed expects.
Result<std::string> generate_library_gemm_kernel(const GemmPlan& plan, const CommentText& problem);
// The same from a given library text (the tests' way to show that a changed library file is an Error).
Result<std::string> generate_library_gemm_kernel(const GemmPlan& plan, const CommentText& problem,
                                                 std::string library);

}  // namespace cutegen::seed
