#pragma once
// The matrix-product route (docs/seed.md, "Matrix products"): a matmul of forward inputs or parameters, each
// optionally transposed in its last two dimensions (2-D, bmm, a batch folded into M, matrix-vector),
// optionally under triu/tril. Its plan, texts and emitter are shared with the routes whose products carry an
// epilogue (gemm_epilogue). Which kernel computes a plan -- the
// library's 3xTF32 GEMM, a GEMV, split K or the tiled template -- is decided once (gemm_kernel_choice.h).
#include "seed/route.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

// forward() returns one matmul (maybe under triu/tril).
Result<GemmPlan> match_gemm(const OpGraph& g);
// The operands of one matmul node (inputs or parameters, each optionally transposed in its last two
// dimensions) into plan's shapes and positions; an Error when the seed GEMM cannot take them.
Status match_matmul(const OpGraph& g, const Node& mm, GemmPlan& plan, std::string_view dtype = "float32");

// "matrix product (the library's 3xTF32 GEMM) y = ...", "matrix product with an epilogue y = ..."
std::string gemm_description(const GemmPlan& plan);
// The kernel first where it is not the tiled GEMM (bench's column is 40 wide): "library 3xTF32 GEMM: ...",
// "GEMV: ...", "split-K x32 GEMM: ...".
std::string gemm_pattern(const GemmPlan& plan);
// The kernel plan.kernel names.
Result<std::string> emit_gemm(const GemmPlan& plan, const CommentText& problem);

inline constexpr RouteDef<GemmPlan> kGemmRoute{"gemm", match_gemm, gemm_description, gemm_pattern, emit_gemm};

}  // namespace cutegen::seed
