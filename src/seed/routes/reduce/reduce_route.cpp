#include "seed/routes/reduce/reduce_route.h"

#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/store_epilogue.h"
#include "seed/routes/reduce/library_reduce.h"
#include "seed/routes/reduce/reduce_kernel.h"

namespace cutegen::seed {
namespace {

// The reduction forward() returns and the node that computes it (torch.max(x, dim)'s pair for a getitem).
std::optional<ReduceOp> reduce_op_of(const OpGraph& g, const Node& out, const Node*& src) {
  src = &out;
  if (out.op == Op::getitem && !out.args.empty() && out.args[0].ref) {
    const Node& tuple = g.node(*out.args[0].ref);
    const double* index = number(out, "index");
    if ((tuple.op == Op::max || tuple.op == Op::min) && index && (*index == 0 || *index == 1)) {
      src = &tuple;
      if (tuple.op == Op::max) return *index == 0 ? ReduceOp::max : ReduceOp::argmax;
      return *index == 0 ? ReduceOp::min : ReduceOp::argmin;
    }
    return std::nullopt;
  }
  switch (out.op.op()) {
    case Op::sum: return ReduceOp::sum;
    case Op::mean: return ReduceOp::mean;
    case Op::prod: return ReduceOp::prod;
    case Op::max: case Op::amax: return ReduceOp::max;
    case Op::min: case Op::amin: return ReduceOp::min;
    case Op::argmax: return ReduceOp::argmax;
    case Op::argmin: return ReduceOp::argmin;
    case Op::logsumexp: return ReduceOp::logsumexp;
    default: return std::nullopt;
  }
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::mean: return "mean";
    case ReduceOp::prod: return "prod";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
    case ReduceOp::argmax: return "argmax";
    case ReduceOp::argmin: return "argmin";
    case ReduceOp::logsumexp: return "logsumexp";
  }
  return "";
}

Result<ReducePlan> match_reduce(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  // A view of the reduction (`.squeeze(-1)` after a global average pool) is the same values: the kernels check
  // only the output's element count and contiguity.
  const Node* out = &through_views(g, **output);
  const Node* src = nullptr;
  const std::optional<ReduceOp> found = reduce_op_of(g, *out, src);
  if (!found || src->args.size() != 1) {
    return Error{fmt::format("the output is {}, not a reduction of an input (the reduction seed is one op alone)",
                         out->op)};
  }
  if (auto why = plain_input(g, src->args[0], "the reduced tensor"); !why.empty()) return Error{why};
  if (!is_none(*src, "dtype")) {
    return Error{fmt::format("{} with a dtype argument", src->op)};
  }
  const Node& x = g.node(*src->args[0].ref);
  const auto& shape = x.type->shape;
  const ReduceOp op = *found;
  ReducePlan plan{.op = op,
                  .out_dtype = op == ReduceOp::argmax || op == ReduceOp::argmin ? "int64" : "float32",
                  .num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size()),
                  .input = x.index};
  const auto dims = dims_of(*src, shape.size());
  if (dims && dims->front() < 0) {
    return Error{fmt::format("{} over a dimension the {}-d input does not have", src->op, shape.size())};
  }
  // Several dimensions next to each other in memory are one of their product's extent: (outer, extent, inner).
  for (std::size_t i = 1; dims && i < dims->size(); ++i) {
    if ((*dims)[i] != (*dims)[i - 1] + 1) {
      return Error{fmt::format("{} over dims ({}), which are not adjacent in memory (the reduction seed merges "
                               "adjacent dimensions into one)",
                               src->op, fmt::join(*dims, ", "))};
    }
  }
  if (dims && !shape.empty()) {
    const auto first = static_cast<std::size_t>(dims->front()), last = static_cast<std::size_t>(dims->back());
    plan.outer = product(shape, 0, first);
    plan.extent = product(shape, first, last + 1);
    plan.inner = product(shape, last + 1, shape.size());
    plan.dim = static_cast<int>(first);
    plan.merged = static_cast<int>(dims->size());
  } else if (op == ReduceOp::sum || op == ReduceOp::mean) {
    // Everything into one number: the loss seed splits that over CTAs, where this one would use one.
    return Error{fmt::format("{} of everything is the loss seed's", reduce_op_name(op))};
  } else {
    plan.extent = product(shape, 0, shape.size());  // everything: one row
  }
  if (plan.extent == 0 && (op != ReduceOp::sum && op != ReduceOp::prod)) {
    return Error{fmt::format("{} over an empty dimension has no value", reduce_op_name(op))};
  }
  plan.pattern = text_of(g, g.outputs[0]);
  plan.kernel_reason = library_reduce_refusal(plan);
  plan.kernel = plan.kernel_reason.empty() ? ReduceKernel::library_reduce_dim : ReduceKernel::reduce_template;
  return plan;
}

std::string reduce_description(const ReducePlan& plan) {
  if (plan.kernel == ReduceKernel::library_reduce_dim) return "reduction (the library's reduce_dim) y = " + plan.pattern;
  return "reduction y = " + plan.pattern + epilogue_description(plan.epilogue);
}

std::string reduce_pattern(const ReducePlan& plan) {
  return plan.kernel == ReduceKernel::library_reduce_dim ? "library reduce_dim: " + plan.pattern
                                                         : plan.pattern + epilogue_pattern(plan.epilogue);
}

Result<std::string> emit_reduce(const ReducePlan& plan, const CommentText& problem) {
  if (plan.kernel == ReduceKernel::library_reduce_dim) {
    // The library's file is read as it is: its store takes no folded step (then_chain.cpp folds none into it).
    if (plan.epilogue) return Error{"a pointwise step folded into the library's reduce_dim"};
    return generate_library_reduce_kernel(plan, problem);
  }
  return generate_reduce_kernel(plan, problem);
}

}  // namespace cutegen::seed
