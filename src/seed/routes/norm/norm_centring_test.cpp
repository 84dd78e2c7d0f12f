// The norm route's centring (x - f(reduce(g(x))), KernelBench level 2's 15 after its BatchNorm) and its groups
// over several adjacent dimensions merged into one extent: the plans, the kernel's text, the refusals, the chain
// after a transposed convolution, and (slow tier) that chain through the real compile stage.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/slow_compile_tests.h"
#include "seed/routes/conv_then/conv_then_plan.h"
#include "seed/routes/norm/library_rmsnorm.h"
#include "seed/routes/norm/norm_kernel.h"
#include "seed/routes/norm/norm_plan.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/host_library.h"
#include "seed/testdata/real_compiler.h"

using namespace cutegen;
using namespace cutegen::seed;
using namespace cutegen::seed::testing;

namespace {

// x <op> mean(x, dim=dims, keepdim=True) of an (N, C, D, H, W) input.
json combined_with_mean(const std::string& op, const std::vector<int64_t>& dims,
                        const std::vector<int64_t>& shape = {4, 6, 5, 9, 11}, json op_params = {{"alpha", 1}}) {
  std::vector<int64_t> reduced = shape;
  for (int64_t d : dims) reduced[static_cast<std::size_t>(d < 0 ? d + static_cast<int64_t>(shape.size()) : d)] = 1;
  return graph({input(0, "x", shape),
                node(1, "mean", {ref(0)}, {{"dim", dims}, {"keepdim", true}, {"dtype", nullptr}}, reduced),
                node(2, op, {ref(0), ref(1)}, op_params, shape)},
               2, 1);
}

const NormPlan* norm_plan(const SeedMatch& m) { return m.plan_as<NormPlan>(); }
const NormPlan* norm_plan(const MatchedPlan& step) {
  const auto* typed = dynamic_cast<const TypedPlan<NormPlan>*>(&step);
  return typed ? &typed->plan() : nullptr;
}

}  // namespace

TEST(NormCentring, TheMeanOverTheSpatialDimsSubtractedIsARowNormOverTheirProduct) {
  auto m = match(combined_with_mean("sub", {2, 3, 4}));
  ASSERT_TRUE(norm_plan(m)) << m.reason;
  const NormPlan& p = *norm_plan(m);
  EXPECT_EQ(p.kind, NormKind::scaled);
  EXPECT_EQ(p.combine, NormCombine::subtract);
  EXPECT_EQ(p.mode, NormMode::rows);
  EXPECT_EQ((std::vector<int64_t>{p.outer, p.extent, p.inner}), (std::vector<int64_t>{4 * 6, 5 * 9 * 11, 1}));
  EXPECT_TRUE(p.mean);
  EXPECT_TRUE(p.pre.empty());
  EXPECT_TRUE(p.post.empty());
  EXPECT_EQ(p.dim, -1);  // several dimensions: no library kernel reads them
  EXPECT_EQ(p.kernel, NormKernel::norm_template);
  EXPECT_EQ(m.description(), "normalisation y = sub(x, mean(x, dim=(2, 3, 4), keepdim=True))");
  const std::string src = generate_norm_kernel(p, CommentText("centre.py"));
  EXPECT_TRUE(contains(src, "// s = the mean of pre(x) over each group, d = post(s), y = x - d.\n")) << src;
  EXPECT_TRUE(contains(src, "constexpr int64_t kOuter = 24, kExtent = 495, kInner = 1;")) << src;
  EXPECT_TRUE(contains(src, "constexpr bool kSubtract = true;  // scaled: y = x - d, else x + d\n")) << src;
  EXPECT_TRUE(contains(src, "  if (!kMeanVar) return kSubtract ? x - c.scale : x + c.scale;\n")) << src;
  EXPECT_FALSE(contains(src, "kDivide")) << src;
  EXPECT_FALSE(contains(src, "{{")) << src;
}

TEST(NormCentring, DivideAndMultiplyKeepTheirKernelText) {
  // x / mean(x) over merged dims: the divisor's text as before subtract was taken.
  auto m = match(combined_with_mean("div", {2, 3}, {4, 6, 5, 7}, {{"rounding_mode", nullptr}}));
  ASSERT_TRUE(norm_plan(m)) << m.reason;
  EXPECT_EQ(norm_plan(m)->combine, NormCombine::divide);
  EXPECT_EQ((std::vector<int64_t>{norm_plan(m)->outer, norm_plan(m)->extent, norm_plan(m)->inner}),
            (std::vector<int64_t>{24, 35, 1}));
  const std::string src = generate_norm_kernel(*norm_plan(m), CommentText("div.py"));
  EXPECT_TRUE(contains(src, "constexpr bool kDivide = true;  // scaled: y = x / d, else x * d\n")) << src;
  EXPECT_TRUE(contains(src, "  if (!kMeanVar) return kDivide ? x / c.scale : x * c.scale;\n")) << src;
  EXPECT_FALSE(contains(src, "kSubtract")) << src;
  auto mul = match(combined_with_mean("mul", {1}, {4, 6, 5}, json::object()));
  ASSERT_TRUE(norm_plan(mul)) << mul.reason;
  EXPECT_EQ(norm_plan(mul)->combine, NormCombine::multiply);
  EXPECT_TRUE(contains(generate_norm_kernel(*norm_plan(mul), CommentText("mul.py")),
                       "constexpr bool kDivide = false;  // scaled: y = x / d, else x * d\n"));
}

TEST(NormCentring, MiddleDimensionsAreColumnsAndAddIsTheOtherSign) {
  auto m = match(combined_with_mean("add", {1, 2}));
  ASSERT_TRUE(norm_plan(m)) << m.reason;
  const NormPlan& p = *norm_plan(m);
  EXPECT_EQ(p.combine, NormCombine::add);
  EXPECT_EQ(p.mode, NormMode::columns);
  EXPECT_EQ((std::vector<int64_t>{p.outer, p.extent, p.inner}), (std::vector<int64_t>{4, 6 * 5, 9 * 11}));
  const std::string src = generate_norm_kernel(p, CommentText("add.py"));
  EXPECT_TRUE(contains(src, "constexpr bool kSubtract = false;")) << src;
  EXPECT_TRUE(contains(src, "y = x + d.")) << src;
  // One dimension keeps its number (the channel RMSNorm reads it).
  auto one = match(combined_with_mean("sub", {-1}));
  ASSERT_TRUE(norm_plan(one)) << one.reason;
  EXPECT_EQ(norm_plan(one)->dim, 4);
  EXPECT_EQ(norm_plan(one)->extent, 11);
}

TEST(NormCentring, RefusesWhatItCannotComputeWithAReason) {
  EXPECT_EQ(match(combined_with_mean("sub", {1, 3})).reason,
            "mean over dims (1, 3), which are not adjacent in memory (the norm seed merges adjacent dimensions into "
            "one)");
  EXPECT_EQ(match(combined_with_mean("sub", {2, 3, 4}, {4, 6, 5, 9, 11}, {{"alpha", 2}})).reason,
            "sub with alpha=2 (the norm seed takes alpha=1)");
  json no_keepdim = combined_with_mean("sub", {1});
  no_keepdim["nodes"][1]["params"]["keepdim"] = false;
  no_keepdim["nodes"][1]["shape"] = {4, 5, 9, 11};
  EXPECT_EQ(match(no_keepdim).reason, "mean over dim 1 without keepdim=True does not broadcast back over its input");
  // d - x: the normalised tensor is the first operand.
  json reversed = combined_with_mean("sub", {2, 3, 4});
  reversed["nodes"][2]["args"] = {ref(1), ref(0)};
  EXPECT_FALSE(match(reversed).matched());
  // Another op than the four: the reason names them.
  json other = combined_with_mean("maximum", {2, 3, 4}, {4, 6, 5, 9, 11}, json::object());
  EXPECT_EQ(match(other).reason, "the output is maximum, not a normalisation (x / f(reduce(g(x))), x - f(reduce(g(x))) "
                                 "or a norm module)");
}

// The channel RMSNorm reduces (N, C, *) over C alone: a mean over (1, 2) merged is the template's.
TEST(NormCentring, TheChannelRmsNormTakesNoMergedDimensions) {
  const std::vector<int64_t> s = {8, 16, 4, 32}, r = {8, 1, 1, 32};
  json g = graph({input(0, "x", s), node(1, "mul", {ref(0), ref(0)}, json::object(), s),
                  node(2, "mean", {ref(1)}, {{"dim", {1, 2}}, {"keepdim", true}, {"dtype", nullptr}}, r),
                  node(3, "add", {ref(2), num(1e-5)}, {{"alpha", 1}}, r), node(4, "sqrt", {ref(3)}, json::object(), r),
                  node(5, "div", {ref(0), ref(4)}, {{"rounding_mode", nullptr}}, s)},
                 5, 1);
  auto m = match(g);
  ASSERT_TRUE(norm_plan(m)) << m.reason;
  EXPECT_EQ(norm_plan(m)->kernel, NormKernel::norm_template);
  EXPECT_EQ(norm_plan(m)->extent, 16 * 4);
  EXPECT_EQ(norm_plan(m)->kernel_reason,
            "not over dimension 1 with positions after it: the library's channel RMSNorm reduces (N, C, *) over C");
}

namespace {

// KernelBench level 2's 15 at a small size: ConvTranspose3d(4, 8, 3, stride=2, padding=1) of (2, 4, 5, 6, 7), a
// training-mode BatchNorm3d(8), then x - mean(x, dim=(2, 3, 4), keepdim=True).
const std::vector<int64_t> kCentreIn = {2, 4, 5, 6, 7}, kCentreOut = {2, 8, 9, 11, 13};
json conv_transpose_batchnorm_centre() {
  json conv = {{"dims", 3}, {"groups", 1}, {"in_channels", 4}, {"out_channels", 8}, {"has_bias", true}};
  for (int i = 0; i < 3; ++i) {
    conv[fmt::format("k{}", i)] = 3;
    conv[fmt::format("s{}", i)] = 2;
    conv[fmt::format("p{}", i)] = 1;
    conv[fmt::format("d{}", i)] = 1;
    conv[fmt::format("o{}", i)] = 0;
  }
  return graph({input(0, "x", kCentreIn), param(1, "up_weight", 1, {4, 8, 3, 3, 3}), param(2, "up_bias", 2, {8}),
                param(3, "bn_weight", 3, {8}), param(4, "bn_bias", 4, {8}),
                node(5, "conv_transpose", {ref(0), ref(1), ref(2)}, conv, kCentreOut),
                node(6, "batch_norm", {ref(5), ref(3), ref(4)},
                     {{"eps", 1e-5}, {"affine", true}, {"track_running_stats", true}, {"training", true},
                      {"has_weight", true}, {"has_bias", true}},
                     kCentreOut),
                node(7, "mean", {ref(6)}, {{"dim", {2, 3, 4}}, {"keepdim", true}, {"dtype", nullptr}}, {2, 8, 1, 1, 1}),
                node(8, "sub", {ref(6), ref(7)}, {{"alpha", 1}}, kCentreOut)},
               8, 1, {"up.weight", "up.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
                      "bn.num_batches_tracked"});
}

}  // namespace

TEST(NormCentring, AfterATransposedConvolutionAndABatchNormItIsTheChainsLastStep) {
  auto m = match(conv_transpose_batchnorm_centre());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = *m.plan_as<ConvThenPlan>();
  ASSERT_EQ(p.steps.size(), 2u);
  const NormPlan* bn = norm_plan(*p.steps[0].seed);
  const NormPlan* centre = norm_plan(*p.steps[1].seed);
  ASSERT_TRUE(bn && centre);
  EXPECT_EQ(bn->kind, NormKind::mean_var);
  EXPECT_EQ(bn->mode, NormMode::channels);
  EXPECT_EQ(centre->combine, NormCombine::subtract);
  EXPECT_EQ((std::vector<int64_t>{centre->outer, centre->extent, centre->inner}),
            (std::vector<int64_t>{2 * 8, 9 * 11 * 13, 1}));
  EXPECT_EQ(centre->num_contract_inputs, 8);  // x and the model's 7 parameters and buffers
  EXPECT_EQ(p.steps[0].bytes, 2 * 8 * 9 * 11 * 13 * 4 / 256 * 256 + 256);  // the BatchNorm's result, rounded up
  EXPECT_EQ(p.steps[1].bytes, 0);                                          // the centring writes the output
  EXPECT_TRUE(contains(m.description(), ", then normalisation y = sub(y, mean(y, dim=(2, 3, 4), keepdim=True)): y = "
                                        "conv_transpose3d("))
      << m.description();
}

TEST(SeedCompile, ConvTransposeBatchNormCentringChainBuildsAndPassesEveryStaticCheck) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution and two norm steps, a few minutes of nvcc");
  auto m = match(conv_transpose_batchnorm_centre());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("conv_transpose_bn_centre.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  // The second norm step's knobs are its own.
  EXPECT_TRUE(contains(*src, "#define S2_NORM_THREADS")) << *src;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_transpose_bn_centre.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  cutegen_tensor in[8] = {fp32(kCentreIn), fp32({4, 8, 3, 3, 3}), fp32({8}), fp32({8}), fp32({8}),
                          fp32({8}),       fp32({8}),              fp32({})};
  const cutegen_tensor y = fp32(kCentreOut);
  // y and the BatchNorm's result, then the convolution's tables and the norms' partials.
  EXPECT_GT(workspace_bytes(in, 8, &y, 1), size_t{2} * 2 * 8 * 9 * 11 * 13 * 4);
  const cutegen_tensor other = fp32({2, 8, 9, 11, 12});  // not the traced output: refused, not written wrong
  EXPECT_EQ(workspace_bytes(in, 8, &other, 1), 0u);
#endif
}
