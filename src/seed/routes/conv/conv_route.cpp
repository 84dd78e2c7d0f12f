#include "seed/routes/conv/conv_route.h"

#include <fmt/format.h>

#include "seed/graph_util.h"
#include "seed/library_text.h"
#include "seed/window.h"

namespace cutegen::seed {
namespace {

// examples/kernels/conv_implicit_gemm.cu, read at build time (src/CMakeLists.txt): the seed is the library
// kernel as measured, with one line set.
constexpr const char* kLibrary =
#include "seed/conv_implicit_gemm.inc"
    ;
constexpr const char* kLibraryFile = "examples/kernels/conv_implicit_gemm.cu";
constexpr const char* kSpecLine = "constexpr ConvSpec kSpec = {2, false, 1, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}};";
constexpr int64_t kMaxWindow = 16;  // the library kernel's tap tables hold 16 taps per dimension

// The parameter at args[at] of the convolution: a contiguous fp32 model parameter, or why not.
Result<const Node*> conv_param(const OpGraph& g, const Node& conv, std::size_t at, const char* what) {
  if (at >= conv.args.size() || !conv.args[at].ref || g.node(*conv.args[at].ref).op != Op::param)
    return Error{fmt::format("the convolution's {} is not one of the model's parameters", what)};
  const Node& p = g.node(*conv.args[at].ref);
  if (!p.type || p.type->dtype != "float32" || !p.type->contiguous)
    return Error{fmt::format("the convolution's {} is not a contiguous float32 parameter", what)};
  return &p;
}

std::string triple(const int64_t v[3]) { return fmt::format("{{{}, {}, {}}}", v[0], v[1], v[2]); }

}  // namespace

Result<ConvPlan> match_conv(const OpGraph& g) {
  auto output = single_output(g);
  if (!output) return output.error();
  const Node* conv = *output;
  if ((conv->op != Op::conv && conv->op != Op::conv_transpose) || conv->args.size() < 2 || !conv->type)
    return Error{fmt::format("the output is {}, not a convolution of an input", conv->op)};
  if (auto why = plain_input(g, conv->args[0], "the convolved tensor"); !why.empty()) return Error{why};
  const Node& x = g.node(*conv->args[0].ref);
  ConvPlan plan;
  plan.kind = conv->op == Op::conv_transpose ? ConvPlan::Kind::transposed : ConvPlan::Kind::forward;
  const double* dims = number(*conv, "dims");
  const double* groups = number(*conv, "groups");
  const double* in_channels = number(*conv, "in_channels");
  const double* out_channels = number(*conv, "out_channels");
  if (!dims || !groups || !in_channels || !out_channels || *dims < 1 || *dims > 3 || *groups < 1)
    return Error{"a convolution without its geometry (dims, groups, channels)"};
  plan.dims = static_cast<int>(*dims);
  plan.groups = static_cast<int64_t>(*groups);
  plan.in_channels = static_cast<int64_t>(*in_channels);
  plan.out_channels = static_cast<int64_t>(*out_channels);
  plan.has_bias = flag(*conv, "has_bias");
  if (!x.type || x.type->dtype != "float32" || !x.type->contiguous ||
      x.type->shape.size() != static_cast<std::size_t>(plan.dims) + 2)
    return Error{fmt::format("a convolution of a {} {}-d input (the library convolution takes a contiguous float32 "
                             "(N, C, spatial...))",
                             x.type ? x.type->dtype : "untyped", x.type ? x.type->shape.size() : 0)};
  if (auto s = read_window(*conv, plan.dims, plan.kernel, plan.stride, plan.padding, plan.dilation, "the convolution");
      !s)
    return s.error();
  if (plan.kind == ConvPlan::Kind::transposed)
    for (int i = 0; i < plan.dims; ++i) {
      const double* o = number(*conv, fmt::format("o{}", i).c_str());
      if (!o || *o < 0) return Error{"the transposed convolution's output_padding is missing"};
      plan.output_padding[3 - plan.dims + i] = static_cast<int64_t>(*o);
    }
  for (int64_t k : plan.kernel)
    if (k > kMaxWindow)
      return Error{fmt::format("a convolution window of {} taps in one dimension (the library convolution holds at "
                               "most {})",
                               k, kMaxWindow)};
  auto weight = conv_param(g, *conv, 1, "weight");
  if (!weight) return weight.error();
  const Node* bias = nullptr;
  if (plan.has_bias) {
    auto b = conv_param(g, *conv, 2, "bias");
    if (!b) return b.error();
    bias = *b;
  }
  // The library kernel reads inputs[0] = x, inputs[1] = weight, inputs[2] = bias.
  const int contract_inputs = g.num_inputs + static_cast<int>(g.params.size());
  if (x.index != 0 || (*weight)->index != 1 || (bias && bias->index != 2) || contract_inputs != (bias ? 3 : 2))
    return Error{"the convolution's input, weight and bias are not the contract's inputs 0, 1 and 2 (the library "
                 "convolution reads them there)"};
  // conv_transpose2d(x, conv_weight, conv_bias, stride=2, padding=1, output_padding=1, dilation=1, groups=4)
  const bool transposed = plan.kind == ConvPlan::Kind::transposed;
  plan.pattern = fmt::format("conv{}{}d({}, {}{}, stride={}, padding={}{}, dilation={}, groups={})",
                             transposed ? "_transpose" : "", plan.dims, x.name, (*weight)->name,
                             bias ? ", " + bias->name : std::string(), per_dim(plan.stride, plan.dims),
                             per_dim(plan.padding, plan.dims),
                             transposed ? ", output_padding=" + per_dim(plan.output_padding, plan.dims) : "",
                             per_dim(plan.dilation, plan.dims), plan.groups);
  return plan;
}

std::string conv_description(const ConvPlan& plan) { return "convolution y = " + plan.pattern; }

std::string conv_pattern(const ConvPlan& plan) { return "library conv_implicit_gemm: " + plan.pattern; }

std::string conv_spec_line(const ConvPlan& p) {
  return fmt::format("constexpr ConvSpec kSpec = {{{}, {}, {}, {}, {}, {}}};", p.dims,
                     p.kind == ConvPlan::Kind::transposed ? "true" : "false", p.groups, triple(p.stride),
                     triple(p.padding), triple(p.dilation));
}

Result<std::string> emit_conv(const ConvPlan& plan, const CommentText& problem) {
  std::string library = kLibrary;
  if (auto s = replace_library_line(library, kSpecLine,
                                    conv_spec_line(plan) + "  // set by the seed from the traced module",
                                    kLibraryFile, "src/seed/routes/conv/conv_route.cpp");
      !s)
    return s.error();
  const std::string header = fmt::format(
      "// Seed kernel for {0}, written by cutegen without an LLM (docs/seed.md):\n"
      "//   y = {1}\n"
      "// The kernel is the library's implicit-GEMM convolution ({2}),\n"
      "// as it is below but for kSpec, which the seed sets from the module (what the tensors' shapes cannot\n"
      "// say: the stride, padding, dilation, groups and whether it is transposed); every size comes from the\n"
      "// descriptors at run time.\n"
      "//\n",
      problem.str(), plan.pattern, kLibraryFile);
  return header + library;
}

}  // namespace cutegen::seed
