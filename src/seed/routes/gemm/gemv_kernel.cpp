#include "seed/routes/gemm/gemv_kernel.h"

#include <string>

#include "seed/copy_words_text.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kGemvTemplate =
#include "seed/gemv_kernel.inc"
    ;

}  // namespace

std::string generate_gemv_kernel(const GemmPlan& plan, const CommentText& problem) {
  // gemv_refusal's two shapes: N == 1 with A's rows contiguous (the matrix is A, the vector B), else M == 1
  // with B given as (N, K) (the matrix is B's storage, the vector A). Either way the vector's K floats are
  // contiguous, whether it is (K,), (K, 1) or a transposed (1, K).
  const bool rows_of_a = plan.n == 1 && !plan.a_transposed;
  std::string text = kGemvTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "COPY_WORDS", kCopyWordsText);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "WHY", plan.kernel_reason);
  replace_placeholder(text, "MATRIX", rows_of_a ? "A, (M, K) row-major" : "B, given as (N, K) row-major");
  replace_placeholder(text, "VECTOR", rows_of_a ? "B" : "A");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "MATRIX_INPUT", std::to_string(rows_of_a ? plan.a_input : plan.b_input));
  replace_placeholder(text, "VECTOR_INPUT", std::to_string(rows_of_a ? plan.b_input : plan.a_input));
  replace_placeholder(text, "ROWS", std::to_string(rows_of_a ? plan.m : plan.n));
  replace_placeholder(text, "K", std::to_string(plan.k));
  return text;
}

}  // namespace cutegen::seed
