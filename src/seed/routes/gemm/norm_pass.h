#pragma once

namespace cutegen::seed {

// The norm pass after a GEMM with an epilogue (GroupNorm over row groups, training-mode BatchNorm over
// columns), one text for both GEMM seeds that have one: the tiled GEMM (gemm_kernel.cu.in) and the library
// GEMM's epilogue seed (library_gemm_epilogue_entry.cu.in), each holding it as {{NORM_PASS}}. The text uses
// what those templates define before it: kM, kN, Norm, kGroups, kEps, Columns and post().
const char* gemm_norm_pass_text();

}  // namespace cutegen::seed
