#include "seed/routes/conv_then/pooled_head.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/template_text.h"
#include "seed/window.h"

namespace cutegen::seed {
namespace {

constexpr const char* kPooledHeadText =
#include "seed/pooled_head.inc"
    ;

constexpr int64_t kLibraryMaxTaps = 16;  // per dimension (library/conv_implicit_gemm.cu's plan())

std::string join_ints(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

// kFirst<d> and kTap<d>: folded tap u gathers kTap<d>[kFirst<d>[u] .. kFirst<d>[u + 1]).
std::pair<std::string, std::string> tap_tables(const std::vector<std::vector<int>>& taps) {
  std::vector<int64_t> first{0}, all;
  for (const auto& t : taps) {
    all.insert(all.end(), t.begin(), t.end());
    first.push_back(static_cast<int64_t>(all.size()));
  }
  return {join_ints(first), join_ints(all)};
}

}  // namespace

std::vector<std::vector<int>> folded_taps(int64_t k, int64_t stride, int64_t dilation, int64_t pool_kernel) {
  std::vector<std::vector<int>> taps(static_cast<std::size_t>((pool_kernel - 1) * stride + (k - 1) * dilation + 1));
  for (int64_t j = 0; j < pool_kernel; ++j)
    for (int64_t t = 0; t < k; ++t) taps[static_cast<std::size_t>(j * stride + t * dilation)].push_back(static_cast<int>(t));
  // Within one u each tap appears once (j = (u - t d) / s is determined by t) and in ascending order once sorted.
  for (auto& t : taps) std::sort(t.begin(), t.end());
  return taps;
}

Result<PooledHead> match_pooled_head(const OpGraph& g, const Node& conv, int split, const ConvPlan& head) {
  if (head.kind != ConvPlan::Kind::forward) return Error{"a transposed convolution (the fold takes forward ones)"};
  if (head.bf16) return Error{"a bf16 convolution"};
  const Node* pool = nullptr;
  int readers = 0;
  for (int id : reachable(g))
    for (const Operand& a : g.node(id).args)
      if (a.ref && *a.ref == split) {
        ++readers;
        pool = &g.node(id);
      }
  if (readers != 1 || !pool || pool->op != Op::avg_pool)
    return Error{"the convolution's result is not read by one average pooling alone"};
  if (!pool->type || pool->type->dtype != "float32") return Error{"the pooling has no fp32 tensor type in the trace"};
  for (const ConvEpilogueOperand& o : head.operands)
    if (o.reads == ConvEpilogueOperand::Reads::element)
      return Error{fmt::format("the ops before the pooling read {} element by element (it would be pooled too)", o.name)};
  if (split != conv.id && !affine_in(g, conv.id, split))
    return Error{"the ops between the convolution and the pooling are not affine in it"};
  PooledHead p;
  p.pool = pool->id;
  const double* dims = number(*pool, "dims");
  if (!dims || static_cast<int>(*dims) != head.dims)
    return Error{"the pooling does not cover the convolution's spatial dimensions"};
  p.dims = head.dims;
  int64_t padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};  // a missing dimension's (read_window sets the rest)
  if (auto s = read_window(*pool, p.dims, p.pool_kernel, p.pool_stride, padding, dilation, "avg_pool"); !s)
    return s.error();
  for (int d = 0; d < 3; ++d)
    if (padding[d] != 0) return Error{"the pooling pads (its padded windows are not a convolution's)"};
  if (flag(*pool, "ceil_mode")) return Error{"the pooling's ceil_mode (its last windows are partial)"};
  if (const double* divisor = number(*pool, "divisor_override"); divisor && *divisor != 0)
    return Error{"the pooling's divisor_override"};
  for (int d = 0; d < 3; ++d) {
    p.taps[static_cast<std::size_t>(d)] = folded_taps(head.kernel[d], head.stride[d], head.dilation[d], p.pool_kernel[d]);
    if (static_cast<int64_t>(p.taps[static_cast<std::size_t>(d)].size()) > kLibraryMaxTaps)
      return Error{fmt::format("the folded kernel would have {} taps in a dimension (the library convolution takes 16)",
                               p.taps[static_cast<std::size_t>(d)].size())};
  }
  p.pool_pattern = fmt::format("avg_pool{}d(y, kernel={}, stride={})", p.dims, per_dim(p.pool_kernel, p.dims),
                               per_dim(p.pool_stride, p.dims));
  return p;
}

ConvPlan folded_conv_plan(const ConvPlan& head, const PooledHead& p, const std::vector<int64_t>& pooled_shape) {
  ConvPlan f = head;
  for (int d = 0; d < 3; ++d) {
    f.kernel[d] = static_cast<int64_t>(p.taps[static_cast<std::size_t>(d)].size());
    f.stride[d] = head.stride[d] * p.pool_stride[d];
    f.dilation[d] = 1;
  }
  f.output_shape = pooled_shape;
  f.pattern = fmt::format("{} of {}", p.pool_pattern, head.pattern);
  return f;
}

int64_t folded_weight_bytes(const ConvPlan& folded) {
  int64_t n = folded.out_channels * (folded.in_channels / folded.groups);
  for (int d = 0; d < 3; ++d) n *= folded.kernel[d];
  return (n * 4 + 255) / 256 * 256;
}

std::string pooled_head_text(const ConvPlan& original, const ConvPlan& folded, const PooledHead& p) {
  std::string text = kPooledHeadText;
  std::vector<int64_t> orig{original.out_channels, original.in_channels / original.groups};
  std::vector<int64_t> fold = orig;
  for (int d = 3 - p.dims; d < 3; ++d) {
    orig.push_back(original.kernel[d]);
    fold.push_back(folded.kernel[d]);
  }
  int64_t window = 1;
  for (int d = 0; d < 3; ++d) window *= p.pool_kernel[d];
  replace_placeholder(text, "POOL_PATTERN", p.pool_pattern);
  replace_placeholder(text, "NUM_INPUTS", std::to_string(original.num_contract_inputs));
  replace_placeholder(text, "WEIGHT_INPUT", std::to_string(original.weight_input));
  replace_placeholder(text, "RANK", std::to_string(p.dims + 2));
  replace_placeholder(text, "ORIG_SHAPE", join_ints(orig));
  replace_placeholder(text, "FOLDED_SHAPE", join_ints(fold));
  replace_placeholder(text, "PLANES", std::to_string(orig[0] * orig[1]));
  replace_placeholder(text, "WINDOW", std::to_string(window));
  for (int d = 0; d < 3; ++d) {
    const auto [first, taps] = tap_tables(p.taps[static_cast<std::size_t>(d)]);
    replace_placeholder(text, fmt::format("K{}", d), std::to_string(original.kernel[d]));
    replace_placeholder(text, fmt::format("F{}", d), std::to_string(folded.kernel[d]));
    replace_placeholder(text, fmt::format("FIRST{}", d), first);
    replace_placeholder(text, fmt::format("TAPS{}", d), taps);
  }
  return text;
}

}  // namespace cutegen::seed
