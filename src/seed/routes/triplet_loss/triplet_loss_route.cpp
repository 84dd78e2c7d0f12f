#include "seed/routes/triplet_loss/triplet_loss_route.h"

#include <variant>

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/routes/triplet_loss/triplet_loss_kernel.h"

namespace cutegen::seed {

Result<TripletLossPlan> match_triplet_loss(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  if (out->op != Op::triplet_margin_loss) {
    return Error{fmt::format("the output is {}, not the triplet margin loss (a fused epilogue is future work)", out->op)};
  }
  const double* p = number(*out, "p");
  if (!p || *p != 2.0) {
    return Error{fmt::format("triplet_margin_loss with p={} (the seed computes the Euclidean distance, p=2)",
                             p ? fmt::format("{:g}", *p) : "a non-number")};
  }
  if (flag(*out, "swap")) {
    return Error{"triplet_margin_loss with swap=True (the seed does not take the positive-negative distance)"};
  }
  for (const char* legacy : {"size_average", "reduce"})
    if (!is_none(*out, legacy)) {
      return Error{fmt::format("triplet_margin_loss with the deprecated {} argument", legacy)};
    }
  auto it = out->params.find("reduction");
  const std::string* reduction = it == out->params.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (!reduction || (*reduction != "mean" && *reduction != "sum")) {
    return Error{fmt::format("triplet_margin_loss with reduction {} (the loss seed writes one number: 'mean' or 'sum')",
                             it == out->params.end() ? "absent" : param_text(it->second))};
  }
  const double* margin = number(*out, "margin");
  const double* eps = number(*out, "eps");
  if (!margin || !eps) {
    return Error{"triplet_margin_loss whose margin or eps is not a number"};
  }
  if (out->args.size() != 3) {
    return Error{fmt::format("triplet_margin_loss with {} operands", out->args.size())};
  }
  static constexpr const char* kRoles[] = {"anchor", "positive", "negative"};
  std::vector<const Node*> operands;
  for (std::size_t k = 0; k < 3; ++k) {
    if (auto why = plain_input(g, out->args[k], fmt::format("the {}", kRoles[k])); !why.empty()) return Error{why};
    operands.push_back(&g.node(*out->args[k].ref));
  }
  const auto& shape = operands[0]->type->shape;
  for (const Node* n : operands)
    if (n->type->shape != shape) {
      return Error{fmt::format("triplet_margin_loss of shapes {}, {} and {} (the seed's operands share one shape)",
                               shape_text(operands[0]->type->shape), shape_text(operands[1]->type->shape),
                               shape_text(operands[2]->type->shape))};
    }
  if (shape.size() != 1 && shape.size() != 2) {
    return Error{fmt::format("triplet_margin_loss of {}-d tensors (the distance is over the last dimension of 1-d or "
                             "(batch, features) tensors)", shape.size())};
  }
  TripletLossPlan plan{.rows = shape.size() == 2 ? shape[0] : 1,
                       .features = shape.back(),
                       .margin = *margin,
                       .eps = *eps,
                       .mean = *reduction == "mean",
                       .anchor_input = operands[0]->index,
                       .positive_input = operands[1]->index,
                       .negative_input = operands[2]->index,
                       .anchor_name = operands[0]->name,
                       .positive_name = operands[1]->name,
                       .negative_name = operands[2]->name,
                       .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                       .pattern = text_of(g, g.outputs[0])};
  if (plan.rows < 1 || plan.features < 1) {
    return Error{fmt::format("triplet_margin_loss of an empty {} tensor", shape_text(shape))};
  }
  return plan;
}

std::string triplet_loss_description(const TripletLossPlan& plan) { return "loss y = " + plan.pattern; }

std::string triplet_loss_pattern(const TripletLossPlan& plan) { return plan.pattern; }

Result<std::string> emit_triplet_loss(const TripletLossPlan& plan, const CommentText& problem) {
  return generate_triplet_loss_kernel(plan, problem);
}

}  // namespace cutegen::seed
