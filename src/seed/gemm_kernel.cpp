#include "seed/gemm_kernel.h"

#include <fmt/format.h>

#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kTemplate =
#include "seed/gemm_kernel.inc"
    ;

}  // namespace

std::string generate_gemm_kernel(const GemmPlan& plan, const std::string& problem_name) {
  std::string text = kTemplate;
  std::string mask_text;
  if (!plan.mask.empty())
    mask_text = fmt::format(
        "\n// Then {}(., diagonal={}): elements outside it are written as zeros, and a tile wholly outside it\n"
        "// skips the product.",
        plan.mask, plan.diagonal);
  replace_placeholder(text, "PROBLEM", problem_name);
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "MASK_TEXT", mask_text);
  replace_placeholder(text, "A_LAYOUT", plan.a_transposed ? "(K, M) row-major (transposed)" : "(M, K) row-major");
  replace_placeholder(text, "B_LAYOUT", plan.b_transposed ? "(N, K) row-major (transposed)" : "(K, N) row-major");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "A_INPUT", std::to_string(plan.a_input));
  replace_placeholder(text, "B_INPUT", std::to_string(plan.b_input));
  replace_placeholder(text, "BATCH", std::to_string(plan.batch));
  replace_placeholder(text, "M", std::to_string(plan.m));
  replace_placeholder(text, "N", std::to_string(plan.n));
  replace_placeholder(text, "K", std::to_string(plan.k));
  replace_placeholder(text, "A_TRANSPOSED", plan.a_transposed ? "true" : "false");
  replace_placeholder(text, "B_TRANSPOSED", plan.b_transposed ? "true" : "false");
  replace_placeholder(text, "A_BATCH_STRIDE", std::to_string(plan.a_batch_stride));
  replace_placeholder(text, "B_BATCH_STRIDE", std::to_string(plan.b_batch_stride));
  replace_placeholder(text, "MASK", plan.mask == "triu" ? "1" : plan.mask == "tril" ? "2" : "0");
  replace_placeholder(text, "DIAGONAL", std::to_string(plan.diagonal));
  return text;
}

}  // namespace cutegen::seed
