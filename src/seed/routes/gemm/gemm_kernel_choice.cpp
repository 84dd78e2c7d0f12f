#include "seed/routes/gemm/gemm_kernel_choice.h"

#include <fmt/format.h>

#include <algorithm>

#include "seed/routes/gemm/folded_gemm_kernel.h"
#include "seed/routes/gemm/gemm_kernel.h"
#include "seed/routes/gemm/gemm_route.h"
#include "seed/routes/gemm/library_gemm.h"

namespace cutegen::seed {
namespace {

constexpr int64_t kLibraryTile = 128;  // the library GEMM's tile, in which "few output tiles" is counted
constexpr int64_t kTiledTile = 64;     // the tiled GEMM's default GEMM_BM = GEMM_BN
constexpr int64_t kSms = 132;          // an H200's
// The judge's workspace cap (python/cutegen_worker/memory.py): 8x the problem's bytes, at least 16 MiB,
// at most 4 GiB.
constexpr int64_t kWorkspaceFactor = 8, kWorkspaceFloor = int64_t{16} << 20;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t tiles(const GemmPlan& p, int64_t tile) { return ceil_div(p.m, tile) * ceil_div(p.n, tile); }

// The slices are doubles, (slices, M, N), in the harness's workspace.
int64_t split_workspace_bytes(const GemmPlan& p, int64_t slices) { return slices * p.m * p.n * 8; }
int64_t workspace_cap(const GemmPlan& p) {
  const int64_t io = 4 * (p.m * p.k + p.k * p.n + p.m * p.n);
  return std::min(kWorkspaceCeiling, std::max(kWorkspaceFloor, kWorkspaceFactor * io));
}

}  // namespace

std::string gemv_refusal(const GemmPlan& p) {
  if (p.has_epilogue() || !p.columns.empty()) return "an epilogue after the product (the GEMV stores the dot products as they are)";
  if (p.mask != GemmMask::none) return fmt::format("the product is under {} (the GEMV has no mask)", gemm_mask_name(p.mask));
  if (p.batch != 1) return "a batched product (the GEMV reads one matrix)";
  if (p.n == 1 && !p.a_transposed) return "";
  if (p.m == 1 && p.b_transposed) return "";
  if (p.n == 1) return "N = 1 but A is transposed, so its rows are strided (the GEMV streams contiguous rows)";
  if (p.m == 1) return "M = 1 but B is (K, N) row-major, so its columns are strided (the GEMV streams contiguous rows)";
  return fmt::format("M = {} and N = {}: no vector operand", p.m, p.n);
}

std::string split_k_refusal(const GemmPlan& p) {
  if (p.has_epilogue() || !p.columns.empty())
    return "an epilogue after the product (split K's second kernel stores the sum of the slices as it is)";
  if (p.mask != GemmMask::none) return fmt::format("the product is under {} (split K has no mask)", gemm_mask_name(p.mask));
  if (p.batch != 1) return "a batched product (the batch and the K slices would share the grid's z)";
  if (tiles(p, kLibraryTile) >= kLibraryGemmMinTiles)
    return fmt::format("{} output tiles of 128x128 fill the GPU without splitting K", tiles(p, kLibraryTile));
  if (p.k < kSplitKMinDepth * std::max(p.m, p.n))
    return fmt::format("K = {} is under {} x max(M, N) = {}: splitting it would not pay", p.k, kSplitKMinDepth,
                       kSplitKMinDepth * std::max(p.m, p.n));
  if (p.k < 2 * kSplitKMinSlice) return fmt::format("K = {} is under two slices of {}", p.k, kSplitKMinSlice);
  // Every value of the knob must fit, not only the default.
  if (split_workspace_bytes(p, kSplitKMax) > workspace_cap(p))
    return fmt::format("{} slices of the (M, N) product in double need {} bytes of workspace, above the judge's cap of {}",
                       kSplitKMax, split_workspace_bytes(p, kSplitKMax), workspace_cap(p));
  return "";
}

std::string skinny_refusal(const GemmPlan& p) {
  if (p.norm != GemmNorm::none) return "a norm after the product (the skinny kernel fuses pointwise ops and a row reduction)";
  if (p.mask != GemmMask::none) return fmt::format("the product is under {} (the skinny kernel has no mask)", gemm_mask_name(p.mask));
  if (p.batch != 1 || !p.matrices) return "not one product of rank-2 matrices";
  if (p.a_transposed || !p.b_transposed)
    return "not x @ W.T with x (M, K) and W (N, K) row-major (the skinny kernel streams K-contiguous rows of both)";
  if (p.m > kSkinnyMaxPlainRows && !p.has_epilogue())
    return fmt::format("a plain product of M = {} rows, above {}: the library GEMM's file takes it (judged at 2x eager "
                       "on KernelBench's plain products, and what a chain's products are)",
                       p.m, kSkinnyMaxPlainRows);
  if (p.k < kSkinnyMinK || p.k % 4 != 0)
    return fmt::format("K = {}: the skinny kernel wants K >= {} and a multiple of 4 (16-byte rows)", p.k, kSkinnyMinK);
  if (tiles(p, kLibraryTile) < kLibraryGemmMinTiles)
    return fmt::format("{} output tiles of 128x128, fewer than {}: most of the GPU would idle", tiles(p, kLibraryTile),
                       kLibraryGemmMinTiles);
  if (skinny_workspace_bytes(p) > workspace_cap(p))
    return fmt::format("A's split copies need {} bytes of workspace, above the judge's cap of {}", skinny_workspace_bytes(p),
                       workspace_cap(p));
  return "";
}

int64_t skinny_workspace_bytes(const GemmPlan& p) {
  const int64_t partials = p.reduce != RowReduce::none ? kRowPartialBytes * p.m * ceil_div(p.n, kLibraryTile) : 0;
  return ceil_div(partials, 256) * 256 + 2 * 4 * p.m * p.k;
}

int64_t split_k_slices(const GemmPlan& p) {
  const int64_t most = std::max<int64_t>(2, std::min(kSplitKMax, p.k / kSplitKMinSlice));
  int64_t s = 2;
  while (s < most && tiles(p, kTiledTile) * s < 2 * kSms) s *= 2;
  // `most` need not be a power of two: the largest power of two within it.
  while (s > most) s /= 2;
  return s;
}

void choose_gemm_kernel(GemmPlan& p, GemmRole role) {
  p.split_k = 1;
  // First: a reduction that can be moved through the product needs no product at all.
  if (folded_gemm_refusal(p).empty()) {
    p.kernel = GemmKernel::folded;
    p.kernel_reason = fmt::format(
        "the {} over each row of an affine function of the product is A times B folded with the function's "
        "per-column coefficients (linearity): a matrix-vector product of {} x {} instead of a {} x {} x {} GEMM",
        row_reduce_name(p.reduce), p.m, p.k, p.m, p.n, p.k);
    return;
  }
  const std::string gemv = gemv_refusal(p);
  if (gemv.empty()) {
    p.kernel = GemmKernel::gemv;
    p.kernel_reason = p.n == 1 ? fmt::format("N = 1: each of the {} outputs is a row of A times the vector B", p.m)
                              : fmt::format("M = 1: each of the {} outputs is the vector A times a row of B (given (N, K))", p.n);
    return;
  }
  const std::string skinny =
      role == GemmRole::chain_step ? "a chain's later step (the skinny kernel's file is no chain step)" : skinny_refusal(p);
  if (skinny.empty()) {
    p.kernel = GemmKernel::skinny;
    p.kernel_reason = fmt::format(
        "x @ W.T, M = {} rows against a {} x {} weight: the skinny 3xTF32 kernel splits the weight in shared memory "
        "as it streams (the library GEMM would write three split copies of it first)",
        p.m, p.n, p.k);
    return;
  }
  const std::string library = library_gemm_refusal(p);
  if (library.empty()) {
    p.kernel = GemmKernel::library;
    p.kernel_reason = fmt::format("{} with {} output tiles of 128x128",
                                  p.has_epilogue() || !p.columns.empty() ? "a product with an epilogue" : "a plain product",
                                  tiles(p, kLibraryTile));
    return;
  }
  const std::string split = split_k_refusal(p);
  if (split.empty()) {
    p.kernel = GemmKernel::split_k;
    p.split_k = split_k_slices(p);
    p.kernel_reason = fmt::format("{} output tiles of 128x128 (fewer than {}) and K = {} >= {} x max(M, N)",
                                 tiles(p, kLibraryTile), kLibraryGemmMinTiles, p.k, kSplitKMinDepth);
    return;
  }
  p.kernel = GemmKernel::tiled;
  p.kernel_reason =
      fmt::format("not GEMV: {}; not the skinny kernel: {}; not the library GEMM: {}; not split K: {}", gemv, skinny,
                  library, split);
}

}  // namespace cutegen::seed
