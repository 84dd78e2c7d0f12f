#include "seed/routes/triplet_loss/triplet_loss_kernel.h"

#include <fmt/format.h>

#include "seed/pointwise_ops.h"
#include "seed/template_text.h"

namespace cutegen::seed {
namespace {

constexpr const char* kTripletLossTemplate =
#include "seed/triplet_loss_kernel.inc"
    ;

}  // namespace

std::string generate_triplet_loss_kernel(const TripletLossPlan& plan, const CommentText& problem) {
  std::string text = kTripletLossTemplate;
  replace_placeholder(text, "PROBLEM", problem.str());
  replace_placeholder(text, "PATTERN", plan.pattern);
  replace_placeholder(text, "ROWS", std::to_string(plan.rows));
  replace_placeholder(text, "FEATURES", std::to_string(plan.features));
  replace_placeholder(text, "ANCHOR", plan.anchor_name);
  replace_placeholder(text, "POSITIVE", plan.positive_name);
  replace_placeholder(text, "NEGATIVE", plan.negative_name);
  replace_placeholder(text, "MARGIN", fmt::format("{:g}", plan.margin));
  replace_placeholder(text, "EPS", fmt::format("{:g}", plan.eps));
  replace_placeholder(text, "SCALE_TEXT", plan.mean ? "1/rows" : "1");
  replace_placeholder(text, "NUM_CONTRACT_INPUTS", std::to_string(plan.num_contract_inputs));
  replace_placeholder(text, "ANCHOR_INPUT", std::to_string(plan.anchor_input));
  replace_placeholder(text, "POSITIVE_INPUT", std::to_string(plan.positive_input));
  replace_placeholder(text, "NEGATIVE_INPUT", std::to_string(plan.negative_input));
  // torch adds a double margin and eps to fp32 tensors in fp32: the numbers rounded to float once.
  replace_placeholder(text, "MARGIN_LITERAL", float_literal(plan.margin));
  replace_placeholder(text, "EPS_LITERAL", float_literal(plan.eps));
  replace_placeholder(text, "SCALE", fmt::format("{:.17g}", plan.mean ? 1.0 / static_cast<double>(plan.rows) : 1.0));
  return text;
}

}  // namespace cutegen::seed
