#include "seed/routes/row_softmax/row_softmax_route.h"

#include <fmt/format.h>

#include "seed/routes/row_softmax/library_softmax.h"
#include "seed/routes/row_softmax/row_softmax_kernel.h"

namespace cutegen::seed {

// The graph is exactly y = softmax(x, dim=last) (or log_softmax) of a forward input.
Result<RowSoftmaxPlan> match_row_softmax(const OpGraph& g) {
  if (g.outputs.size() != 1 || !g.outputs[0].ref) {
    return Error{"forward() must return the one softmax"};
  }
  const Node& n = g.node(*g.outputs[0].ref);
  if ((n.op != Op::softmax && n.op != Op::log_softmax) || n.args.size() != 1 || !n.args[0].ref) {
    return Error{fmt::format("the output is not a softmax of an input (the row-softmax seed is softmax(x) alone)")};
  }
  const Node& x = g.node(*n.args[0].ref);
  if (x.op != Op::input || x.scalar || !x.type) {
    return Error{fmt::format("{} of a computed value (the row-softmax seed takes a forward input)", n.op)};
  }
  if (x.type->dtype != "float32" || !n.type || n.type->dtype != "float32") {
    return Error{fmt::format("{} in {} (the row-softmax seed is float32)", n.op, x.type->dtype)};
  }
  if (auto d = n.params.find("dtype"); d != n.params.end() && !std::holds_alternative<std::monostate>(d->second)) {
    return Error{fmt::format("{} with a dtype argument", n.op)};
  }
  const auto rank = static_cast<int64_t>(x.type->shape.size());
  auto dim = n.params.find("dim");
  const double* d = dim == n.params.end() ? nullptr : std::get_if<double>(&dim->second);
  if (!d) {
    return Error{fmt::format("{} without a dim (the implicit dim is deprecated)", n.op)};
  }
  if (rank == 0 || !x.type->contiguous || (static_cast<int64_t>(*d) != rank - 1 && static_cast<int64_t>(*d) != -1)) {
    return Error{fmt::format("{} over dim {} of a {}-d tensor (the seed handles the last dimension)", n.op, *d, rank)};
  }
  RowSoftmaxPlan plan{.log = n.op == Op::log_softmax,
                      .shape = x.type->shape,
                      .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                      .input = x.index,
                      .pattern = fmt::format("{}({}, dim={})", n.op, x.name, static_cast<int64_t>(*d))};
  plan.kernel_reason = library_softmax_refusal(plan);
  plan.kernel = !plan.kernel_reason.empty()                                     ? SoftmaxKernel::row_template
                : library_softmax_kernel(plan) == LibrarySoftmax::ticket ? SoftmaxKernel::library_ticket
                                                                          : SoftmaxKernel::library_cluster;
  return plan;
}


std::string row_softmax_description(const RowSoftmaxPlan& plan) {
  switch (plan.kernel) {
    case SoftmaxKernel::library_ticket: return "row softmax (the library's ticket softmax) y = " + plan.pattern;
    case SoftmaxKernel::library_cluster: return "row softmax (the library's cluster softmax) y = " + plan.pattern;
    case SoftmaxKernel::row_template: break;
  }
  return "row softmax y = " + plan.pattern;
}

std::string row_softmax_pattern(const RowSoftmaxPlan& plan) {
  switch (plan.kernel) {
    case SoftmaxKernel::library_ticket: return "library ticket softmax: " + plan.pattern;
    case SoftmaxKernel::library_cluster: return "library cluster softmax: " + plan.pattern;
    case SoftmaxKernel::row_template: break;
  }
  return plan.pattern;
}

Result<std::string> emit_row_softmax(const RowSoftmaxPlan& plan, const CommentText& problem) {
  if (plan.kernel == SoftmaxKernel::row_template) return generate_row_softmax_kernel(plan, problem);
  return generate_library_softmax_kernel(plan, problem);
}

}  // namespace cutegen::seed
