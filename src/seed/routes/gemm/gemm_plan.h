#pragma once
// The matrix-product routes' plan (gemm_route.h and gemm_epilogue_route.h share it, its
// texts and its emitter): C[b] = A[b] @ B[b] in fp32, with what runs on the product before it is stored.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/evaluation.h"
#include "seed/plan_parts.h"

namespace cutegen::seed {

// An operand of a GEMM epilogue read per output column: element n * stride of a contiguous fp32 tensor
// (a bias of shape (N,) or (1, N): stride 1; a single number of shape (), (1,) or (1, 1): stride 0).
struct ColumnOperand {
  int input = 0;       // contract position
  int64_t stride = 1;  // 1 or 0
  std::string name;
  bool post = false;   // read by post() (after a norm), else by epilogue()
};

// The kernels a matrix product can get (gemm_kernel_choice.h decides):
//   tiled    the seed's own CUDA-core GEMM (gemm_kernel.cu.in), right for every plan;
//   library  the library's 3xTF32 GEMM (library_gemm.h): a large plain product;
//   gemv     a memory-bound matrix-vector kernel (gemv_kernel.cu.in): a plain product with N == 1 or M == 1;
//   split_k  the tiled GEMM with K split over CTAs and the slices summed by a second kernel: a plain product
//            with few output tiles and a long K.
//   skinny   the tiled GEMM's file with the product on a 3xTF32 wgmma kernel that splits the weight in shared
//            memory (skinny_gemm_kernel.cu.in): x @ W.T with the weight given (N, K), nn.Linear's, any M;
//   folded   no product at all: the sum or mean over each row of an affine function of the product is, by
//            linearity, A times B folded with the function's per-column coefficients (folded_gemm_kernel.h),
//            a matrix-vector product.
enum class GemmKernel { tiled, library, gemv, split_k, folded, skinny };

// triu/tril of the product: elements outside set to zero.
enum class GemmMask { none, triu, tril };
// gemm_epilogue_reduce: the epilogue's values reduced over each output row.
enum class RowReduce { none, sum, mean, max, min, logsumexp };
// gemm_epilogue_norm: the epilogue's values normalised by a GroupNorm over each row's groups or a
// training-mode BatchNorm over each column.
enum class GemmNorm { none, group, batch };
// As torch spells them ("triu", "logsumexp", ...; "" for none): the generated comments and refusals.
std::string_view gemm_mask_name(GemmMask mask);
std::string_view row_reduce_name(RowReduce reduce);

// C[b] = A[b] @ B[b] in fp32, A (M, K) and B (K, N) as the kernel reads them; `a_transposed` means the
// tensor given is (K, M) row-major (A.T in forward()), `b_transposed` (N, K). Batch strides 0 share an
// operand across the batch. Optionally triu/tril of the product (elements outside set to zero).
// Optionally an epilogue (the gemm_epilogue pattern: nn.Linear or a matmul, then pointwise ops): each
// element y of the product, in fp32, becomes `result` through `epilogue`'s statements over y and the
// column operands c0, c1, ... before it is stored. With `reduce` (gemm_epilogue_reduce), the epilogue's
// values are instead reduced over each output row (sum, mean, max, min or logsumexp over N) and `post`'s
// statements map the row's statistic s to the one value stored per row. With `norm` (gemm_epilogue_norm),
// the epilogue's values are normalised -- GroupNorm over each row's `norm_groups` runs of N / groups columns,
// or training-mode BatchNorm over each column's M values -- and `post`'s statements map the normalised value
// s (its affine weight and bias applied by the first statements) to the value stored.
struct GemmPlan {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_transposed = false, b_transposed = false;
  int64_t a_batch_stride = 0, b_batch_stride = 0;
  GemmMask mask = GemmMask::none;
  int64_t diagonal = 0;
  int num_contract_inputs = 0;
  int a_input = 0, b_input = 1;
  std::vector<ColumnOperand> columns;
  std::vector<PointwiseStep> epilogue;
  std::string result = "y";
  RowReduce reduce = RowReduce::none;
  GemmNorm norm = GemmNorm::none;
  int64_t norm_groups = 1;
  double norm_eps = 1e-5;
  std::vector<PointwiseStep> post;
  std::string post_result = "s";
  // Every op from the product's element to `result` is affine in it (additions, subtractions, and
  // multiplications and divisions by values that do not depend on the product): the matcher's finding, which
  // lets a row sum or mean be folded through the product (GemmKernel::folded).
  bool affine_epilogue = false;
  std::string pattern;
  // A, B and the product are all rank 2: no batch, none folded into M, no vector (match_matmul).
  bool matrices = false;
  // (..., M, K) @ (K, N) with A of rank > 2 untransposed, B a rank-2 matrix and the product a contiguous
  // fp32 tensor: A's leading dimensions fold into M (KernelBench 10, 11).
  bool folds_into_m = false;
  // (L, M, K) @ (L, K, N), either operand possibly transposed in its last two dimensions, and a contiguous
  // fp32 (L, M, N) product: a batch of `batch` matrix products (KernelBench 3).
  bool batched_matrices = false;
  // Which kernel computes the product: exactly one per plan, decided by choose_gemm_kernel
  // (gemm_kernel_choice.h) from the shapes, with `kernel_reason` saying why (for a tiled plan, why each other
  // kernel refused it).
  GemmKernel kernel = GemmKernel::tiled;
  // On the library kernel: which file, by the run's precision policy -- the 3xTF32 GEMM (strict), or for a plain
  // product the TF32 or bf16 GEMM (library_gemm.h: library_gemm_precision_refusal); set after matching by the
  // seed stage (seed_from_graph), which alone knows the policy.
  Precision library_precision = Precision::strict;
  // bf16 operands and product (match_gemm): the library's bf16 GEMM is the plan's kernel; every other plan is fp32.
  bool bf16 = false;
  int64_t split_k = 1;  // split_k: the default number of K slices (the GEMM_SPLIT_K knob's default)
  std::string kernel_reason;
  bool has_epilogue() const { return !epilogue.empty() || reduce != RowReduce::none || norm != GemmNorm::none; }
};

}  // namespace cutegen::seed
