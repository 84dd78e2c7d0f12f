#include "seed/routes/conv_fold/conv_fold_route.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seed/graph_util.h"
#include "seed/signed_div.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/routes/then/chain_values.h"
#include "seed/template_text.h"
#include "seed/workspace_cap.h"

namespace cutegen::seed {
namespace {

constexpr const char* kConvFoldTemplate =
#include "seed/conv_fold_kernel.inc"
    ;
constexpr const char* kConvFoldChainHeader =
#include "seed/conv_fold_chain.inc"
    ;
constexpr const char* kConvFoldSeedFile = "src/seed/routes/conv_fold/conv_fold_route.cpp";
// Boxes of segments per input plane: each is a double of every thread's registers in the sums kernel.
constexpr int kMaxBoxes = 27;

// The spatial dimensions of a rank-r tensor: 2 .. r-1.
bool reduces_every_spatial_dim(const OpGraph& g, const Node& r) {
  if ((r.op != Op::sum && r.op != Op::mean) || r.args.empty() || !r.args[0].ref || !is_none(r, "dtype")) return false;
  const Node& x = g.node(*r.args[0].ref);
  if (!x.type || x.type->shape.size() < 3) return false;
  auto dims = dims_of(r, x.type->shape.size());
  if (!dims) return false;
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < static_cast<int64_t>(x.type->shape.size()); ++d) spatial.push_back(d);
  return *dims == spatial;
}

std::string braces(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

std::string tap_text(const std::vector<std::array<int, 2>>& taps) {
  std::vector<std::string> parts;
  for (const auto& t : taps) parts.push_back(fmt::format("{{{}, {}}}", t[0], t[1]));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The epilogue in double: its operands (one per output channel, or a number), then one statement per op.
std::string double_epilogue_body(const ConvPlan& p) {
  std::string body;
  for (std::size_t i = 0; i < p.operands.size(); ++i) {
    const bool channel = p.operands[i].reads == ConvEpilogueOperand::Reads::channel;
    body += fmt::format("  const double e{0} = e.p[{0}][{1}];  // {2}{3}\n", i, channel ? "ch" : "0",
                        p.operands[i].name, channel ? "[ch]" : ", one number");
  }
  for (const auto& s : p.epilogue) body += fmt::format("  const double {} = {};  // {}\n", s.value, s.expr, s.what);
  return body + fmt::format("  return {};", p.result);
}

std::string spatial_text(const int64_t (&v)[3], int dims) {
  std::vector<int64_t> used(v + 3 - dims, v + 3);
  return used.size() == 1 ? std::to_string(used[0]) : fmt::format("({})", fmt::join(used, ", "));
}

std::string fold_kernel_text(const ConvFoldPlan& plan, const CommentText& problem) {
  const ConvPlan& c = plan.conv;
  std::string t = kConvFoldTemplate;
  std::vector<int64_t> in(3, 1);
  for (int d = 0; d < c.dims; ++d) in[3 - c.dims + d] = c.input_shape[2 + d];
  int64_t flops = 2 * c.in_channels * c.out_channels * plan.positions * c.input_shape[0];
  for (int s = 0; s < 3; ++s) flops *= c.kernel[s];
  replace_placeholder(t, "PROBLEM", problem.str());
  replace_placeholder(t, "REDUCE", plan.mean ? "mean" : "sum");
  replace_placeholder(t, "PATTERN", plan.pattern);
  replace_placeholder(t, "INPUT_SHAPE", shape_text(c.input_shape));
  replace_placeholder(t, "COUT", std::to_string(c.out_channels));
  replace_placeholder(t, "CONV_TEXT",
                      fmt::format("{} with kernel {}, stride {}, padding {}, dilation {}",
                                  c.kind == ConvPlan::Kind::transposed ? "transposed" : "forward",
                                  spatial_text(c.kernel, c.dims), spatial_text(c.stride, c.dims),
                                  spatial_text(c.padding, c.dims), spatial_text(c.dilation, c.dims)));
  replace_placeholder(t, "POSITIONS", std::to_string(plan.positions));
  replace_placeholder(t, "SEGMENTS", std::to_string(plan.segments()));
  replace_placeholder(t, "FLOPS", fmt::format("{:.3g}", static_cast<double>(flops)));
  replace_placeholder(t, "NUM_CONTRACT_INPUTS", std::to_string(c.num_contract_inputs));
  replace_placeholder(t, "X_INPUT", std::to_string(c.x_input));
  replace_placeholder(t, "W_INPUT", std::to_string(c.weight_input));
  replace_placeholder(t, "BIAS_INPUT", std::to_string(c.has_bias ? c.bias_input : -1));
  replace_placeholder(t, "TRANSPOSED", c.kind == ConvPlan::Kind::transposed ? "true" : "false");
  replace_placeholder(t, "MEAN", plan.mean ? "true" : "false");
  replace_placeholder(t, "N", std::to_string(c.input_shape[0]));
  replace_placeholder(t, "CIN", std::to_string(c.in_channels));
  for (int s = 0; s < 3; ++s) {
    replace_placeholder(t, fmt::format("IN{}", s), std::to_string(in[s]));
    replace_placeholder(t, fmt::format("TAPS{}", s), std::to_string(c.kernel[s]));
    replace_placeholder(t, fmt::format("SEG{}", s), std::to_string(plan.cuts[s].size() - 1));
    replace_placeholder(t, fmt::format("CUTS{}", s), braces(plan.cuts[s]));
    replace_placeholder(t, fmt::format("TAPSEG{}", s), tap_text(plan.tap_segments[s]));
  }
  std::vector<std::string> inputs, per_channel;
  for (const auto& o : c.operands) {
    inputs.push_back(std::to_string(o.input));
    per_channel.push_back(o.reads == ConvEpilogueOperand::Reads::channel ? "true" : "false");
  }
  inputs.push_back("-1");  // the unused entry
  per_channel.push_back("false");
  replace_placeholder(t, "NUM_OPERANDS", std::to_string(c.operands.size()));
  replace_placeholder(t, "OPERAND_INPUTS", fmt::format("{}", fmt::join(inputs, ", ")));
  replace_placeholder(t, "OPERAND_PER_CHANNEL", fmt::format("{}", fmt::join(per_channel, ", ")));
  replace_placeholder(t, "EPILOGUE_BODY", double_epilogue_body(c));
  return t;
}

}  // namespace

void fold_intervals(bool transposed, int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t padding,
                    int64_t dilation, std::vector<int64_t>& cuts, std::vector<std::array<int, 2>>& tap_segments) {
  std::vector<std::array<int64_t, 2>> intervals;  // per tap, the input positions [lo, hi] it carries into the output
  std::set<int64_t> points{0, in};
  for (int64_t t = 0; t < taps; ++t) {
    const int64_t shift = t * dilation - padding;  // forward: i = o + shift; transposed: o = i * stride + shift
    int64_t lo = transposed ? ceil_div_signed(-shift, stride) : shift;
    int64_t hi = transposed ? floor_div(out - 1 - shift, stride) : out - 1 + shift;
    lo = std::max<int64_t>(lo, 0);
    hi = std::min<int64_t>(hi, in - 1);
    intervals.push_back({lo, hi});
    if (lo <= hi) {
      points.insert(lo);
      points.insert(hi + 1);
    }
  }
  cuts.assign(points.begin(), points.end());
  tap_segments.clear();
  for (const auto& [lo, hi] : intervals) {
    if (lo > hi) {
      tap_segments.push_back({1, 0});
      continue;
    }
    const int first = static_cast<int>(std::find(cuts.begin(), cuts.end(), lo) - cuts.begin());
    const int end = static_cast<int>(std::find(cuts.begin(), cuts.end(), hi + 1) - cuts.begin());
    tap_segments.push_back({first, end - 1});
  }
}

Result<ConvFoldPlan> match_conv_fold(const OpGraph& g, SecondSeedMatcher second) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node& out = **output;
  const std::vector<int> reach = reachable(g);
  const Node* only = only_convolution(g, reach);
  if (!only) return Error{"not one convolution"};
  const Node& conv = *only;
  if (!conv.type) return Error{"the convolution has no tensor type in the trace"};
  const std::set<int> head = pointwise_after(g, conv, reach);
  if (head.count(out.id)) return Error{"no reduction after the convolution's pointwise ops"};
  // The head must be read by one reduction only: the sum or mean over every spatial dimension.
  std::set<int> readers, read;
  for (int id : reach)
    if (!head.count(id))
      for (const Operand& a : g.node(id).args)
        if (a.ref && head.count(*a.ref)) readers.insert(id), read.insert(*a.ref);
  if (readers.size() != 1 || read.size() != 1)
    return Error{"the convolution's values are read by more than one op after its pointwise ops"};
  const Node& r = g.node(*readers.begin());
  const int split = *read.begin();
  if (!reduces_every_spatial_dim(g, r))
    return Error{fmt::format("{} after the convolution is not a sum or mean over every spatial dimension", r.op)};
  if (!affine_in(g, conv.id, split))
    return Error{"an op between the convolution and the reduction is not affine in the convolution's value"};
  OpGraph head_graph = g;
  head_graph.outputs = {Operand{.ref = split}};
  auto c = match_conv_epilogue(head_graph);
  if (!c) return Error{fmt::format("the convolution: {}", c.error().message)};
  if (c->bf16 || c->groups != 1) return Error{"a bf16 or grouped convolution"};
  for (const auto& o : c->operands)
    if (o.reads == ConvEpilogueOperand::Reads::element)
      return Error{fmt::format("the ops after the convolution read {} per element", o.name)};
  const bool transposed = c->kind == ConvPlan::Kind::transposed;
  if (!transposed)
    for (int s = 0; s < 3; ++s)
      if (c->stride[s] != 1) return Error{"a forward convolution with a stride (its taps read strided positions)"};
  if (c->x_input != 0 || g.num_inputs < 1) return Error{"the convolution does not read forward input 0"};
  ConvFoldPlan plan;
  plan.conv = *c;
  plan.mean = r.op == Op::mean;
  for (int s = 0; s < 3; ++s) {
    const int d = s - (3 - c->dims);  // the tensor's spatial dimension of slot s, or < 0 for a missing one
    const int64_t in = d >= 0 ? c->input_shape[2 + d] : 1, o = d >= 0 ? c->output_shape[2 + d] : 1;
    plan.positions *= o;
    fold_intervals(transposed, in, o, c->kernel[s], c->stride[s], c->padding[s], c->dilation[s], plan.cuts[s],
                   plan.tap_segments[s]);
  }
  if (plan.segments() > kMaxBoxes)
    return Error{fmt::format("the taps cut each input plane into {} boxes (at most {})", plan.segments(), kMaxBoxes)};
  if (!r.type) return Error{"the reduction has no tensor type in the trace"};
  plan.reduced_shape = r.type->shape;
  plan.num_contract_inputs = g.num_inputs + static_cast<int>(g.params.size());
  plan.input_shape = c->input_shape;
  if (!out.type) return Error{"the output has no tensor type in the trace"};
  plan.output_shape = out.type->shape;
  // conv_epilogue's pattern is "<epilogue>, y = <convolution>"; without an epilogue, the convolution alone.
  std::string of = c->pattern;
  if (!c->has_epilogue() && of.starts_with("y, y = ")) of.erase(0, 7);
  plan.pattern = fmt::format("{} over every spatial dimension of {}", plan.mean ? "mean" : "sum", of);
  plan.num_forward_inputs = g.num_inputs;
  if (r.id != out.id) {
    auto steps = chain_steps_after(g, r.id, r.id, second, "reduction", /*head_file_scope=*/false);
    if (!steps) return steps.error();
    plan.steps = std::move(*steps);
  }
  int64_t results = result_bytes(plan.reduced_shape), scratch = 8 * plan.segments() * c->input_shape[0] * c->in_channels;
  for (const auto& s : plan.steps) {
    results += s.bytes;
    scratch = std::max(scratch, then_step_scratch(*s.seed));
  }
  if (const int64_t cap = judge_workspace_cap(g); results + scratch > cap)
    return Error{fmt::format("the box sums and the steps' results ({} bytes) do not fit the judge's workspace cap "
                             "for this problem ({} bytes)",
                             results + scratch, cap)};
  return plan;
}

std::string conv_fold_description(const ConvFoldPlan& plan) {
  std::string text = fmt::format("{} of a convolution over every spatial dimension, folded through it (box sums of "
                                 "the input): y = {}",
                                 plan.mean ? "mean" : "sum", plan.pattern);
  for (const auto& s : plan.steps) text += ", then " + s.seed->description();
  return text;
}

std::string conv_fold_pattern(const ConvFoldPlan& plan) {
  std::vector<std::string> steps;
  for (const auto& s : plan.steps) steps.push_back(s.seed->pattern());
  return steps.empty() ? fmt::format("folded convolution: {}", plan.pattern)
                       : fmt::format("folded convolution, then {}; y = {}", fmt::join(steps, ", then "), plan.pattern);
}

Result<std::string> emit_conv_fold(const ConvFoldPlan& plan, const CommentText& problem) {
  std::string kernel = fold_kernel_text(plan, problem);
  if (plan.steps.empty()) return kernel;
  const StaticEntries entries = make_entries_static(kernel, "fold_");
  if (entries.forward || !entries.forward_ws || !entries.workspace_bytes ||
      kernel.find("extern \"C\"") != std::string::npos)
    return Error{fmt::format("the folded convolution's seed does not have exactly the entry points "
                             "cutegen_forward_ws and cutegen_workspace_bytes as {} expects",
                             kConvFoldSeedFile)};
  auto parts = split_prelude(kernel, "conv_fold", kConvFoldSeedFile);
  if (!parts) return parts.error();
  const ThenFile file{.header = then_header(kConvFoldChainHeader, plan.steps, plan.pattern, plan.reduced_shape),
                      .chain_namespace = "conv_fold",
                      .head_noun = "folded convolution",
                      .seed_file = kConvFoldSeedFile,
                      .num_contract_inputs = plan.num_contract_inputs,
                      .num_forward_inputs = plan.num_forward_inputs,
                      .input_shape = plan.input_shape,
                      .output_shape = plan.output_shape,
                      .shared_scratch = true};
  return emit_then_file(file,
                        namespaced_head(*parts, "fold_", true, "the folded convolution's reduction -> y",
                                        plan.reduced_shape, result_bytes(plan.reduced_shape)),
                        plan.steps, problem);
}

}  // namespace cutegen::seed
