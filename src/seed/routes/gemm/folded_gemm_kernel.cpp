#include "seed/routes/gemm/folded_gemm_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "seed/routes/gemm/gemm_kernel.h"
#include "seed/copy_words_text.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kFoldedTemplate =
#include "seed/folded_gemm_kernel.inc"
    ;

// The template's kSplits: about four CTAs of 1024 K columns per SM of 132, at most 64 slices, at most N.
int64_t splits(const GemmPlan& p) {
  if (!p.b_transposed) return 0;
  const int64_t k_blocks = (p.k + 1023) / 1024;
  const int64_t want = k_blocks > 0 ? (4 * 132 + k_blocks - 1) / k_blocks : 1;
  return std::max<int64_t>(1, std::min({want, int64_t{64}, p.n}));
}

// The epilogue in double: the column operands it reads, then one statement per op, each `const double`. Only
// affine chains are folded (additions, subtractions, multiplications, divisions), whose expressions are the same
// text in either type.
std::string double_epilogue_body(const GemmPlan& plan) {
  std::string body;
  for (std::size_t i = 0; i < plan.columns.size(); ++i) {
    const auto& c = plan.columns[i];
    if (c.post) continue;
    body += fmt::format("  const double c{0} = cols.p[{0}][{1}];  // {2}{3}\n", i, c.stride ? "n" : "0", c.name,
                        c.stride ? "[n]" : ", one number");
  }
  for (const auto& s : plan.epilogue) body += fmt::format("  const double {} = {};  // {}\n", s.value, s.expr, s.what);
  return body + fmt::format("  return {};", plan.result);
}

}  // namespace

std::string folded_gemm_refusal(const GemmPlan& p) {
  if (p.reduce != RowReduce::sum && p.reduce != RowReduce::mean)
    return "the output is not the sum or mean over each row of the product";
  if (!p.affine_epilogue) return "an op between the product and the reduction is not affine in the product";
  if (p.norm != GemmNorm::none || p.mask != GemmMask::none) return "a norm or a mask on the product";
  if (p.bf16) return "bf16 operands";
  if (p.batch != 1) return "a batched product";
  if (p.a_transposed) return "A is transposed (the fold streams A's rows)";
  if (!p.matrices && !p.folds_into_m) return "the product is not one (M, K) @ (K, N) of contiguous fp32 tensors";
  return "";
}

int64_t folded_gemm_workspace_bytes(const GemmPlan& p) {
  return 8 * (2 * p.n + 1 + p.k + splits(p) * p.k);
}

std::string generate_folded_gemm_kernel(const GemmPlan& plan, const CommentText& problem) {
  std::string text = kFoldedTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "COPY_WORDS", kCopyWordsText);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "WHY", plan.kernel_reason);
  replace_placeholder(text, "REDUCE", std::string(row_reduce_name(plan.reduce)));
  replace_placeholder(text, "B_LAYOUT", plan.b_transposed ? "(N, K) row-major" : "(K, N) row-major");
  fill_gemm_shape(text, plan);
  replace_placeholder(text, "B_TRANSPOSED", plan.b_transposed ? "true" : "false");
  replace_placeholder(text, "MEAN", plan.reduce == RowReduce::mean ? "true" : "false");
  fill_column_operands(text, plan);
  replace_placeholder(text, "EPILOGUE_BODY", double_epilogue_body(plan));
  replace_placeholder(text, "POST_BODY", gemm_epilogue_body(plan, true));
  return text;
}

}  // namespace cutegen::seed
