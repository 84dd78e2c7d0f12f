#include "seed/routes/row_softmax/row_softmax_kernel.h"

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kRowSoftmaxTemplate =
#include "seed/row_softmax_kernel.inc"
    ;
constexpr const char* kStridedSoftmaxTemplate =
#include "seed/strided_softmax_kernel.inc"
    ;

}  // namespace

std::string generate_row_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem) {
  std::string text = kRowSoftmaxTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "OP", plan.log ? "log_softmax" : "softmax");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  if (plan.log) {
    // ATen's log_softmax: x - max - log(sum(exp(x - max))).
    replace_placeholder(text, "PASS2_TEXT", "x - max - log(sum)");
    replace_placeholder(text, "PASS2_SETUP", "    const float shift = row.max + logf(row.sum);");
    replace_placeholder(text, "PASS2_EXPR", "frag(i) - shift");
  } else {
    replace_placeholder(text, "PASS2_TEXT", "exp(x - max) / sum");
    replace_placeholder(text, "PASS2_SETUP", "    const float inv = 1.f / row.sum;");
    replace_placeholder(text, "PASS2_EXPR", "expf(frag(i) - row.max) * inv");
  }
  return text;
}

std::string generate_strided_softmax_kernel(const RowSoftmaxPlan& plan, const CommentText& problem) {
  std::string text = kStridedSoftmaxTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "OP", plan.log ? "log_softmax" : "softmax");
  replace_placeholder(text, "DIM", std::to_string(plan.dim));
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "INPUT", std::to_string(plan.input));
  replace_placeholder(text, "OUTER", std::to_string(plan.outer));
  replace_placeholder(text, "EXTENT", std::to_string(plan.extent));
  replace_placeholder(text, "INNER", std::to_string(plan.inner));
  // ATen's formulas, as the row kernel computes them.
  if (plan.log) {
    replace_placeholder(text, "PASS2_TEXT", "x - max - log(sum)");
    replace_placeholder(text, "PASS2_SETUP", "    const float shift = acc.max + logf(acc.sum);");
    replace_placeholder(text, "PASS2_EXPR", "v - shift");
  } else {
    replace_placeholder(text, "PASS2_TEXT", "exp(x - max) / sum");
    replace_placeholder(text, "PASS2_SETUP", "    const float inv = 1.f / acc.sum;");
    replace_placeholder(text, "PASS2_EXPR", "expf(v - acc.max) * inv");
  }
  return text;
}

}  // namespace cutegen::seed
