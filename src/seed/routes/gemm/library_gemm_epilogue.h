#pragma once
// The seed of a large matrix product with an epilogue (the gemm_epilogue routes: nn.Linear or a matmul, then
// pointwise ops, optionally a row reduction or a norm): the library's 3xTF32 GEMM
// (library/gemm_sm90_3xtf32.cu, compiled in as text, as library_gemm.h takes it) with the epilogue
// fused into its CUTLASS collective epilogue as a visitor (library_gemm_epilogue_prelude.cu.in), and the
// seed's own entry points around the library's (library_gemm_epilogue_entry.cu.in). On an H200 the seed's
// CUDA-core GEMM ran KernelBench level 2's 22 verified GEMM + epilogue problems at 0.25-0.37x eager, while the
// library kernel runs plain products of the same sizes at 1.6-2.1x eager, strict fp32.
#include <string>

#include "common/result.h"
#include "seed/comment_text.h"
#include "seed/routes/gemm/gemm_plan.h"

namespace cutegen::seed {

// The candidate: a header saying what and why, then the library source with the lines the seed sets (marked
// "set by the seed": kTransA / kTransB, the collective epilogue's fusion, the alpha/beta arguments it drops,
// its entry points renamed), the epilogue visitor before its namespace and the seed's entry points after it.
// An Error naming the line when the library file no longer has one of those lines exactly once.
Result<std::string> generate_library_gemm_epilogue_kernel(const GemmPlan& plan, const CommentText& problem);
// The same from a given library text (the tests' way to show that a changed library file is an Error).
Result<std::string> generate_library_gemm_epilogue_kernel(const GemmPlan& plan, const CommentText& problem,
                                                          std::string library);

}  // namespace cutegen::seed
