#include "seed/routes/row_softmax/row_softmax_kernel.h"

#include "seed/store_epilogue.h"
#include "seed/copy_words_text.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kRowSoftmaxTemplate =
#include "seed/row_softmax_kernel.inc"
    ;
constexpr const char* kStridedSoftmaxTemplate =
#include "seed/strided_softmax_kernel.inc"
    ;

// What both templates share: the problem, the pattern, the op, the contract's inputs, and ATen's formula for
// the second pass, over the template's own names for the value (`value`) and its (max, sum) (`acc`).
void fill_softmax_common(std::string& text, const RowSoftmaxPlan& plan, const CommentText& problem,
                         const std::string& value, const std::string& acc) {
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "COPY_WORDS", kCopyWordsText);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "OP", plan.log ? "log_softmax" : "softmax");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  if (plan.log) {
    // ATen's log_softmax: x - max - log(sum(exp(x - max))).
    replace_placeholder(text, "PASS2_TEXT", "x - max - log(sum)");
    replace_placeholder(text, "PASS2_SETUP", "    const float shift = " + acc + ".max + logf(" + acc + ".sum);");
    replace_placeholder(text, "PASS2_EXPR", value + " - shift");
  } else {
    replace_placeholder(text, "PASS2_TEXT", "exp(x - max) / sum");
    replace_placeholder(text, "PASS2_SETUP", "    const float inv = 1.f / " + acc + ".sum;");
    replace_placeholder(text, "PASS2_EXPR", "expf(" + value + " - " + acc + ".max) * inv");
  }
}

}  // namespace

std::string generate_row_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem) {
  std::string text = kRowSoftmaxTemplate;
  fill_softmax_common(text, plan, problem, "frag(i)", "row");
  fill_store_epilogue(text, plan.epilogue);
  return text;
}

std::string generate_strided_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem) {
  std::string text = kStridedSoftmaxTemplate;
  fill_softmax_common(text, plan, problem, "v", "acc");
  replace_placeholder(text, "DIM", std::to_string(plan.dim));
  replace_placeholder(text, "OUTER", std::to_string(plan.outer));
  replace_placeholder(text, "EXTENT", std::to_string(plan.extent));
  replace_placeholder(text, "INNER", std::to_string(plan.inner));
  fill_store_epilogue(text, plan.epilogue);
  return text;
}

}  // namespace cutegen::seed
