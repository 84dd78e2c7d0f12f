#include "seed/routes/row_softmax/row_softmax_route.h"

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/store_epilogue.h"

#include "seed/routes/row_softmax/library_softmax.h"
#include "seed/routes/row_softmax/row_softmax_kernel.h"

namespace cutegen::seed {

// The graph is exactly y = softmax(x, dim) (or log_softmax) of a forward input.
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
  const int64_t axis = static_cast<int64_t>(*d) < 0 ? static_cast<int64_t>(*d) + rank : static_cast<int64_t>(*d);
  if (rank == 0 || axis < 0 || axis >= rank) {
    return Error{fmt::format("{} over dim {} of a {}-d tensor", n.op, *d, rank)};
  }
  if (!x.type->contiguous) return Error{fmt::format("{} of a non-contiguous tensor", n.op)};
  const auto& shape = x.type->shape;
  const auto at = static_cast<std::size_t>(axis);
  RowSoftmaxPlan plan{.log = n.op == Op::log_softmax,
                      .shape = shape,
                      .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                      .input = x.index,
                      .pattern = fmt::format("{}({}, dim={})", n.op, x.name, static_cast<int64_t>(*d)),
                      .dim = axis,
                      .outer = product(shape, 0, at),
                      .extent = shape[at],
                      .inner = product(shape, at + 1, shape.size())};
  // Over another dimension than the last (a softmax over an NCHW tensor's channels): a thread per column.
  if (plan.inner > 1) {
    plan.kernel = SoftmaxKernel::strided_template;
    plan.kernel_reason = fmt::format("dim {} of {} is not the last: {} columns of {} values {} apart", axis,
                                     shape_text(shape), plan.outer * plan.inner, plan.extent, plan.inner);
    return plan;
  }
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
    case SoftmaxKernel::strided_template:
      return "softmax over a strided dimension y = " + plan.pattern + epilogue_description(plan.epilogue);
    case SoftmaxKernel::row_template: break;
  }
  return "row softmax y = " + plan.pattern + epilogue_description(plan.epilogue);
}

std::string row_softmax_pattern(const RowSoftmaxPlan& plan) {
  switch (plan.kernel) {
    case SoftmaxKernel::library_ticket: return "library ticket softmax: " + plan.pattern;
    case SoftmaxKernel::library_cluster: return "library cluster softmax: " + plan.pattern;
    case SoftmaxKernel::strided_template: return "strided softmax: " + plan.pattern + epilogue_pattern(plan.epilogue);
    case SoftmaxKernel::row_template: break;
  }
  return plan.pattern + epilogue_pattern(plan.epilogue);
}

Result<std::string> emit_row_softmax(const RowSoftmaxPlan& plan, const CommentText& problem) {
  if (plan.kernel == SoftmaxKernel::row_template) return generate_row_softmax_kernel(plan, problem);
  if (plan.kernel == SoftmaxKernel::strided_template) return generate_strided_softmax_kernel(plan, problem);
  // The library's files are read as they are: their stores take no folded step (then_chain.cpp folds none into them).
  if (plan.epilogue) return Error{"a pointwise step folded into the library's softmax"};
  return generate_library_softmax_kernel(plan, problem);
}

}  // namespace cutegen::seed
