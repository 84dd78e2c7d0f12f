#include "seed/routes/cross_entropy/cross_entropy_route.h"

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/routes/cross_entropy/cross_entropy_kernel.h"

namespace cutegen::seed {

Result<CrossEntropyPlan> match_cross_entropy(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  if (out->op != Op::cross_entropy || out->args.size() != 2) {
    return Error{fmt::format("the output is {}, not a cross entropy of inputs", out->op)};
  }
  for (const char* unsupported : {"weight", "size_average", "reduce"})
    if (!is_none(*out, unsupported)) {
      return Error{fmt::format("cross_entropy with {}", unsupported)};
    }
  const double* smoothing = number(*out, "label_smoothing");
  if (smoothing && *smoothing != 0) {
    return Error{"cross_entropy with label smoothing"};
  }
  auto it = out->params.find("reduction");
  const std::string* reduction = it == out->params.end() ? nullptr : std::get_if<std::string>(&it->second);
  const std::string r = reduction ? *reduction : "mean";
  if (r != "mean" && r != "sum") {
    return Error{fmt::format("cross_entropy with reduction '{}' (the loss seed writes one number)", r)};
  }
  if (auto why = plain_input(g, out->args[0], "the logits"); !why.empty()) return Error{why};
  const Node& logits = g.node(*out->args[0].ref);
  const Node* targets = out->args[1].ref ? &g.node(*out->args[1].ref) : nullptr;
  const auto& shape = logits.type->shape;
  if (shape.size() != 2 || !targets || targets->op != Op::input || !targets->type || targets->type->dtype != "int64" ||
      !targets->type->contiguous || targets->type->shape != std::vector<int64_t>{shape[0]}) {
    return Error{"cross_entropy of other than (B, C) logits and (B,) int64 class indices"};
  }
  const double* ignore = number(*out, "ignore_index");
  return CrossEntropyPlan{.rows = shape[0],
                          .classes = shape[1],
                          .ignore_index = ignore ? static_cast<int64_t>(*ignore) : -100,
                          .mean = r == "mean",
                          .logits_input = logits.index,
                          .targets_input = targets->index,
                          .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                          .pattern = text_of(g, g.outputs[0])};
}


std::string cross_entropy_description(const CrossEntropyPlan& plan) { return "loss y = " + plan.pattern; }

std::string cross_entropy_pattern(const CrossEntropyPlan& plan) { return plan.pattern; }

Result<std::string> emit_cross_entropy(const CrossEntropyPlan& plan, const CommentText& problem) { return generate_cross_entropy_kernel(plan, problem); }

}  // namespace cutegen::seed
