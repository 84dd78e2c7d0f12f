#pragma once
// A matrix-product plan (gemm_plan.h) as a candidate .cu file: the seed's own tiled fp32 GEMM
// (gemm_kernel.cu.in), with the operands' order, batch and triu/tril mask written in, and for the split_k
// kernel (gemm_kernel_choice.h) K split over the grid's z. Kept apart from the library's fast GEMMs
// (library/gemm_*.cu): the seed must be right for any shape.
#include <cstdint>
#include <string>

#include "seed/comment_text.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

std::string generate_gemm_kernel(const GemmPlan& plan, const CommentText& problem);

// The template's Partial (two doubles): a row reduction's partial per (row, column tile) in the workspace.
inline constexpr int64_t kRowPartialBytes = 16;

// Which of the template's two contract entry points a build of the plan keeps (its SEED_WORKSPACE): true for
// cutegen_forward_ws with cutegen_workspace_bytes (a row reduction's partials, split K's slices), false for
// cutegen_forward. A chain that calls the text's entry points calls that one (gemm_then's tiled head).
bool tiled_gemm_uses_workspace(const GemmPlan& plan);
// The most workspace the template asks for the plan over its knobs (GEMM_BN's smallest tile for a row
// reduction's partials), in bytes; 0 without one. Split K's slices are not bounded here (no chain takes it).
int64_t tiled_gemm_workspace_bound(const GemmPlan& plan);

// The texts the library GEMM's epilogue seed (library_gemm_epilogue.h) shares with this template: the body of
// `epilogue(y, n, cols)` (post_side false) or `post(s, n, cols)` (true) -- the column operands that side reads,
// each loaded once, then one statement per op of forward() -- and the Reduce / Norm enumerators of the plan.
std::string gemm_epilogue_body(const GemmPlan& plan, bool post_side);
std::string gemm_reduce_enum(RowReduce reduce);
// Fills the templates' column-operand placeholders from the plan: {{NUM_COLUMNS}}, and {{COLUMN_INPUTS}} and
// {{COLUMN_STRIDES}}, each array with one unused entry so that none is empty (the tiled, library and folded
// GEMM templates declare them alike).
void fill_column_operands(std::string& text, const GemmPlan& plan);
// Fills the product's shape and operand placeholders, which the tiled, library and folded GEMM templates name
// alike: {{NUM_CONTRACT_INPUTS}}, {{A_INPUT}}, {{B_INPUT}}, {{M}}, {{N}} and {{K}}.
void fill_gemm_shape(std::string& text, const GemmPlan& plan);
std::string gemm_norm_enum(GemmNorm norm);

}  // namespace cutegen::seed
