#include "seed/routes/norm/norm_route.h"

#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/store_epilogue.h"
#include "seed/routes/norm/library_rmsnorm.h"
#include "seed/routes/norm/norm_kernel.h"

namespace cutegen::seed {
namespace {

// The plan with the kernel that computes it.
NormPlan with_kernel(NormPlan plan) {
  plan.kernel_reason = library_rmsnorm_refusal(plan);
  plan.kernel = plan.kernel_reason.empty() ? NormKernel::library_channel_rmsnorm : NormKernel::norm_template;
  return plan;
}

// The scaled kind's last op: x / d, x * d, x - d or x + d.
std::optional<NormCombine> combine_of(Op op) {
  if (op == Op::div) return NormCombine::divide;
  if (op == Op::mul) return NormCombine::multiply;
  if (op == Op::sub) return NormCombine::subtract;
  if (op == Op::add) return NormCombine::add;
  return std::nullopt;
}

}  // namespace

std::string_view norm_mode_name(NormMode mode) {
  switch (mode) {
    case NormMode::rows: return "rows";
    case NormMode::columns: return "columns";
    case NormMode::channels: return "channels";
    case NormMode::all: return "all";
  }
  return "";
}

Result<NormPlan> match_norm(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* out = *output;
  NormPlan plan{.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size())};
  if (is_norm_module(out->op.op())) {
    if (out->args.empty()) {
      return Error{fmt::format("{} without an operand", out->op)};
    }
    if (auto why = plain_input(g, out->args[0], fmt::format("{}'s input", out->op)); !why.empty()) return Error{why};
    const Node& x = g.node(*out->args[0].ref);
    const auto& shape = x.type->shape;
    const std::size_t rank = shape.size();
    plan.kind = NormKind::mean_var;
    plan.input = x.index;
    const double* eps = number(*out, "eps");
    plan.eps = eps ? *eps : 1e-5;
    // weight and bias, when the module has them, follow x as param operands.
    std::size_t next = 1;
    for (const char* which : {"has_weight", "has_bias"}) {
      if (!flag(*out, which)) continue;
      if (next >= out->args.size() || !out->args[next].ref || g.node(*out->args[next].ref).op != Op::param) {
        return Error{fmt::format("{}'s {} is not one of the model's parameters", out->op, which + 4)};
      }
      const Node& p = g.node(*out->args[next++].ref);
      if (!p.type || p.type->dtype != "float32" || !p.type->contiguous) {
        return Error{fmt::format("{}'s {} is not a contiguous float32 parameter", out->op, which + 4)};
      }
      (std::string(which) == "has_weight" ? plan.weight_input : plan.bias_input) = p.index;
    }
    const int64_t numel = product(shape, 0, rank);
    if (out->op == Op::layer_norm) {
      const double* nd = number(*out, "normalized_ndim");
      if (!nd || *nd < 1 || static_cast<std::size_t>(*nd) > rank) {
        return Error{"layer_norm over more dimensions than its input has"};
      }
      plan.mode = NormMode::rows;
      plan.extent = product(shape, rank - static_cast<std::size_t>(*nd), rank);
      plan.outer = plan.extent ? numel / plan.extent : 0;
      plan.ch_per_group = plan.extent;  // the weight is indexed by the position in the row
    } else {
      if (rank < 2 || (out->op == Op::batch_norm ? false : rank < 3)) {
        return Error{fmt::format("{} of a {}-d input (the seed takes a batch: N, C, ...)", out->op, rank)};
      }
      const int64_t n = shape[0], c = shape[1], hw = product(shape, 2, rank);
      if (out->op == Op::group_norm) {
        const double* groups = number(*out, "num_groups");
        if (!groups || *groups < 1 || c % static_cast<int64_t>(*groups)) {
          return Error{"group_norm's channels do not divide into its groups"};
        }
        const auto gcount = static_cast<int64_t>(*groups);
        plan.mode = NormMode::rows;
        plan.outer = n * gcount;
        plan.extent = c / gcount * hw;
        plan.ch_groups = gcount;
        plan.ch_per_group = c / gcount;
        plan.ch_hw = hw;
      } else {
        const bool running = flag(*out, "track_running_stats") && !flag(*out, "training");
        if (running) {
          return Error{fmt::format("{} in eval mode uses its running statistics (no seed for that yet)", out->op)};
        }
        if (out->op == Op::instance_norm) {
          plan.mode = NormMode::rows;
          plan.outer = n * c;
          plan.extent = hw;
          plan.ch_groups = c;
          plan.ch_per_group = 1;
          plan.ch_hw = hw;
        } else {
          plan.mode = NormMode::channels;
          plan.outer = n;
          plan.extent = c;
          plan.inner = hw;
        }
      }
    }
    plan.pattern = text_of(g, g.outputs[0]);
    return with_kernel(std::move(plan));
  }
  const std::optional<NormCombine> combine = combine_of(out->op.op());
  if (!combine || out->args.size() != 2 || !out->args[0].ref || !out->args[1].ref) {
    return Error{fmt::format("the output is {}, not a normalisation (x / f(reduce(g(x))), x - f(reduce(g(x))) or a "
                             "norm module)",
                             out->op)};
  }
  if (out->op == Op::add || out->op == Op::sub) {
    // x + alpha * d: torch's alpha scales the second operand.
    const double* alpha = number(*out, "alpha");
    if (alpha && *alpha != 1) return Error{fmt::format("{} with alpha={} (the norm seed takes alpha=1)", out->op, *alpha)};
  }
  if (auto why = plain_input(g, out->args[0], "the normalised tensor"); !why.empty()) return Error{why};
  const Node& x = g.node(*out->args[0].ref);
  const auto& shape = x.type->shape;
  if (!out->type || out->type->shape != shape) {
    return Error{"the normalised output does not have its input's shape"};
  }
  // The one reduction the divisor depends on.
  std::vector<int> reductions;
  std::set<int> seen;
  std::vector<int> stack{*out->args[1].ref};
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const Node& n = g.node(id);
    if (n.op == Op::sum || n.op == Op::mean || n.op == Op::norm) {
      reductions.push_back(id);
      continue;
    }
    for (const auto& a : n.args)
      if (a.ref) stack.push_back(*a.ref);
  }
  if (reductions.size() != 1) {
    return Error{fmt::format("the divisor depends on {} sum/mean/norm reductions; the norm seed takes one",
                         reductions.size())};
  }
  const Node& r = g.node(reductions[0]);
  if (r.args.size() != 1 || !r.args[0].ref || !is_none(r, "dtype") || !r.type) {
    return Error{fmt::format("{} with arguments the norm seed does not take", r.op)};
  }
  plan.kind = NormKind::scaled;
  plan.input = x.index;
  plan.mean = r.op == Op::mean;
  plan.combine = *combine;
  auto pre = emit_chain(g, *r.args[0].ref, {{x.id, "x0"}}, "p", plan.pre);
  if (!pre) return pre.error();
  plan.pre_result = *pre;
  std::string stat = "s";
  if (r.op == Op::norm) {
    std::string p = "2";
    auto it = r.params.find("p");
    if (it != r.params.end()) {
      if (const double* d = std::get_if<double>(&it->second)) p = fmt::format("{}", *d);
      else if (const std::string* s = std::get_if<std::string>(&it->second)) p = *s == "fro" ? "2" : *s;
    }
    if (p == "2") {
      plan.pre.push_back({"p_sq", fmt::format("({0} * {0})", plan.pre_result), "square, for the 2-norm"});
      plan.pre_result = "p_sq";
      plan.post.push_back({"s_norm", "sqrtf(s)", "the 2-norm"});
      stat = "s_norm";
    } else if (p == "1") {
      plan.pre.push_back({"p_abs", fmt::format("fabsf({})", plan.pre_result), "abs, for the 1-norm"});
      plan.pre_result = "p_abs";
    } else {
      return Error{fmt::format("norm with p={} (the seed has p=1, 2 and 'fro')", p)};
    }
  }
  auto post = emit_chain(g, *out->args[1].ref, {{r.id, stat}}, "q", plan.post);
  if (!post) return post.error();
  plan.post_result = *post;
  const auto dims = dims_of(r, shape.size());
  if (!dims) {
    plan.mode = NormMode::all;
    plan.extent = product(shape, 0, shape.size());
  } else {
    const std::string named = dims->size() == 1 ? fmt::format("dim {}", dims->front())
                                                : fmt::format("dims ({})", fmt::join(*dims, ", "));
    if (dims->empty() || dims->front() < 0) {
      return Error{fmt::format("{} over a dimension the {}-d input does not have", r.op, shape.size())};
    }
    if (!flag(r, "keepdim")) {
      return Error{fmt::format("{} over {} without keepdim=True does not broadcast back over its input", r.op, named)};
    }
    // Several dimensions next to each other in memory are one group of their product's extent, as the reduction
    // route merges them (x - x.mean(dim=(2, 3, 4), keepdim=True): a row of D x H x W values per (n, c)).
    for (std::size_t i = 1; i < dims->size(); ++i) {
      if ((*dims)[i] != (*dims)[i - 1] + 1) {
        return Error{fmt::format("{} over {}, which are not adjacent in memory (the norm seed merges adjacent "
                                 "dimensions into one)",
                                 r.op, named)};
      }
    }
    const auto first = static_cast<std::size_t>(dims->front()), last = static_cast<std::size_t>(dims->back());
    plan.outer = product(shape, 0, first);
    plan.extent = product(shape, first, last + 1);
    plan.inner = product(shape, last + 1, shape.size());
    plan.mode = plan.inner == 1 ? NormMode::rows : NormMode::columns;
    plan.dim = dims->size() == 1 ? static_cast<int>(first) : -1;
  }
  const Node& divisor = g.node(*out->args[1].ref);
  if (!divisor.type || divisor.type->shape != r.type->shape) {
    return Error{"the divisor is broadcast beyond its reduction's shape"};
  }
  plan.pattern = text_of(g, g.outputs[0]);
  return with_kernel(std::move(plan));
}

std::string norm_description(const NormPlan& plan) {
  return plan.kernel == NormKernel::library_channel_rmsnorm
             ? "normalisation (the library's channel RMSNorm) y = " + plan.pattern
             : "normalisation y = " + plan.pattern + epilogue_description(plan.epilogue);
}

std::string norm_pattern(const NormPlan& plan) {
  return plan.kernel == NormKernel::library_channel_rmsnorm ? "library channel RMSNorm: " + plan.pattern
                                                            : plan.pattern + epilogue_pattern(plan.epilogue);
}

Result<std::string> emit_norm(const NormPlan& plan, const CommentText& problem) {
  if (plan.kernel == NormKernel::library_channel_rmsnorm) {
    // The library's file is read as it is: its store takes no folded step (then_chain.cpp folds none into it).
    if (plan.epilogue) return Error{"a pointwise step folded into the library's channel RMSNorm"};
    return generate_library_rmsnorm_kernel(plan, problem);
  }
  return generate_norm_kernel(plan, problem);
}

}  // namespace cutegen::seed
