// The conv_fold route: the input intervals each tap carries into the output (against a brute-force walk of the
// convolution's index arithmetic), which graphs fold and which keep the convolution, the kernel's text, and its
// build through the real compile stage with its host checks. Whether it computes the right numbers is the GPU's
// to say: scripts/gpu_seed.py judges problems/conv_transpose2d_scale_global_mean.py, and `cutegen bench`
// KernelBench level 2's 42 and 44.
#include <gtest/gtest.h>

#include <set>

#include "common/slow_compile_tests.h"
#include "seed/routes/conv_fold/conv_fold_route.h"
#include "seed/seed.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/real_compiler.h"

using namespace cutegen;
using namespace cutegen::seed;
using namespace cutegen::seed::testing;
using json = nlohmann::json;

namespace {

// The input positions tap t carries into an output of `out` positions, by the convolution's own arithmetic.
std::set<int64_t> carried(bool transposed, int64_t in, int64_t out, int64_t t, int64_t stride, int64_t padding,
                          int64_t dilation) {
  std::set<int64_t> positions;
  for (int64_t i = 0; i < in; ++i) {
    if (transposed) {
      const int64_t o = i * stride - padding + t * dilation;
      if (o >= 0 && o < out) positions.insert(i);
    } else {
      for (int64_t o = 0; o < out; ++o)
        if (o * stride - padding + t * dilation == i) positions.insert(i);
    }
  }
  return positions;
}

TEST(ConvFold, EachTapsSegmentsAreExactlyTheInputPositionsItCarriesIntoTheOutput) {
  struct Case {
    bool transposed;
    int64_t in, taps, stride, padding, dilation, output_padding;
  };
  const Case cases[] = {{true, 128, 3, 2, 1, 1, 1},  {true, 512, 3, 1, 0, 1, 0}, {true, 9, 4, 3, 2, 1, 2},
                        {true, 7, 3, 1, 2, 2, 0},    {true, 5, 5, 2, 4, 1, 1},   {false, 10, 3, 1, 1, 1, 0},
                        {false, 16, 5, 1, 0, 1, 0},  {false, 12, 3, 1, 2, 3, 0}, {false, 6, 3, 1, 3, 1, 0}};
  for (const Case& c : cases) {
    const int64_t out = c.transposed ? (c.in - 1) * c.stride - 2 * c.padding + c.dilation * (c.taps - 1) + 1 +
                                           c.output_padding
                                     : c.in + 2 * c.padding - c.dilation * (c.taps - 1);
    ASSERT_GT(out, 0);
    std::vector<int64_t> cuts;
    std::vector<std::array<int, 2>> taps;
    fold_intervals(c.transposed, c.in, out, c.taps, c.stride, c.padding, c.dilation, cuts, taps);
    ASSERT_EQ(taps.size(), static_cast<std::size_t>(c.taps));
    EXPECT_EQ(cuts.front(), 0);
    EXPECT_EQ(cuts.back(), c.in);
    for (int64_t t = 0; t < c.taps; ++t) {
      std::set<int64_t> from_segments;
      for (int s = taps[t][0]; s <= taps[t][1]; ++s)
        for (int64_t i = cuts[s]; i < cuts[s + 1]; ++i) from_segments.insert(i);
      EXPECT_EQ(from_segments, carried(c.transposed, c.in, out, t, c.stride, c.padding, c.dilation))
          << (c.transposed ? "transposed" : "forward") << " in " << c.in << " taps " << c.taps << " stride "
          << c.stride << " padding " << c.padding << " dilation " << c.dilation << ", tap " << t;
    }
  }
  // KernelBench level 2's 42 (stride 1, no padding): every tap carries the whole plane, one segment.
  std::vector<int64_t> cuts;
  std::vector<std::array<int, 2>> taps;
  fold_intervals(true, 512, 514, 3, 1, 0, 1, cuts, taps);
  EXPECT_EQ(cuts, (std::vector<int64_t>{0, 512}));
}

json transposed_params(int in, int out, int stride, int padding, int output_padding) {
  return {{"dims", 2},         {"groups", 1},       {"in_channels", in}, {"out_channels", out}, {"has_bias", true},
          {"k0", 3},           {"k1", 3},           {"s0", stride},      {"s1", stride},        {"p0", padding},
          {"p1", padding},     {"d0", 1},           {"d1", 1},           {"o0", output_padding}, {"o1", output_padding}};
}

// KernelBench level 2's 44 at a small size: conv_transpose(stride 2, padding 1, output_padding 1), * 0.5, then the
// mean over (2, 3) twice (the second of a 1x1 plane); `act` puts a relu before the first mean instead.
json conv_t_scale_mean_mean(bool relu = false) {
  const std::vector<int64_t> s = {2, 6, 16, 20}, m = {2, 6, 1, 1};
  return graph({input(0, "x", {2, 4, 8, 10}), param(1, "conv_weight", 1, {4, 6, 3, 3}), param(2, "conv_bias", 2, {6}),
                node(3, "conv_transpose", {ref(0), ref(1), ref(2)}, transposed_params(4, 6, 2, 1, 1), s),
                node(4, relu ? "relu" : "mul", relu ? json::array({ref(3)}) : json::array({ref(3), num(0.5)}),
                     json::object(), s),
                node(5, "mean", {ref(4)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, m),
                node(6, "mean", {ref(5)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, m)},
               6, 1, {"conv.weight", "conv.bias"});
}

// KernelBench level 2's 42 at a small size: conv_transpose (stride 1), the mean over (2, 3), + a (C, 1, 1) bias,
// logsumexp over the channels, the sum over (2, 3), * 10.
json conv_t_mean_bias_lse() {
  const std::vector<int64_t> s = {2, 6, 10, 12}, m = {2, 6, 1, 1}, l = {2, 1, 1, 1};
  return graph({input(0, "x", {2, 4, 8, 10}), param(1, "conv_weight", 1, {4, 6, 3, 3}), param(2, "conv_bias", 2, {6}),
                param(3, "bias", 3, {6, 1, 1}),
                node(4, "conv_transpose", {ref(0), ref(1), ref(2)}, transposed_params(4, 6, 1, 0, 0), s),
                node(5, "mean", {ref(4)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, m),
                node(6, "add", {ref(5), ref(3)}, {{"alpha", 1}}, m),
                node(7, "logsumexp", {ref(6)}, {{"dim", 1}, {"keepdim", true}}, l),
                node(8, "sum", {ref(7)}, {{"dim", {2, 3}}, {"keepdim", false}, {"dtype", nullptr}}, {2, 1}),
                node(9, "mul", {ref(8), num(10.0)}, json::object(), {2, 1})},
               9, 1, {"conv.weight", "conv.bias", "bias"});
}

const ConvFoldPlan& fold_plan_of(const SeedMatch& m) { return *m.plan_as<ConvFoldPlan>(); }

TEST(ConvFold, AGlobalMeanOfAnAffineConvolutionIsFolded) {
  auto m = match(conv_t_scale_mean_mean());
  ASSERT_TRUE(m.plan_as<ConvFoldPlan>()) << m.route() << ": " << m.reason;
  const ConvFoldPlan& p = fold_plan_of(m);
  EXPECT_TRUE(p.mean);
  EXPECT_EQ(p.positions, 16 * 20);
  EXPECT_EQ(p.reduced_shape, (std::vector<int64_t>{2, 6, 1, 1}));
  // Rows: tap 0 skips input row 0 (its output would be row -1); columns likewise: two segments each.
  EXPECT_EQ(p.cuts[1], (std::vector<int64_t>{0, 1, 8}));
  EXPECT_EQ(p.cuts[2], (std::vector<int64_t>{0, 1, 10}));
  EXPECT_EQ(p.segments(), 4);
  ASSERT_EQ(p.steps.size(), 1u);  // the second mean, of a 1x1 plane
  EXPECT_TRUE(m.description().starts_with("mean of a convolution over every spatial dimension, folded through it"))
      << m.description();
  auto src = m.plan->emit(CommentText("conv_t_mean.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr bool kTransposed = true;")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr bool kMean = true;")) << *src;
  EXPECT_TRUE(contains(*src, "__constant__ int kTapSeg1[kTaps1][2] = { {1, 1}, {0, 1}, {0, 1} };")) << *src;
  EXPECT_TRUE(contains(*src, "  const double v4 = (y * 0.5f);")) << *src;
  EXPECT_TRUE(contains(*src, "seed_head::fold_forward_ws(inputs, kNumInputs, &out, 1, base + used, part, stream)"))
      << *src;
  EXPECT_FALSE(contains(*src, "{{")) << *src;
}

TEST(ConvFold, WhatFollowsTheReductionIsTheTablesNextSeed) {
  auto m = match(conv_t_mean_bias_lse());
  ASSERT_TRUE(m.plan_as<ConvFoldPlan>()) << m.route() << ": " << m.reason;
  const ConvFoldPlan& p = fold_plan_of(m);
  EXPECT_EQ(p.segments(), 1);  // stride 1, no padding: every tap carries the whole plane
  ASSERT_FALSE(p.steps.empty());
  EXPECT_EQ(p.output_shape, (std::vector<int64_t>{2, 1}));
}

TEST(ConvFold, WhatIsNotLinearUpToTheReductionKeepsTheConvolution) {
  // An activation before the mean: conv_then (the convolution, then the reduction).
  auto relu = match(conv_t_scale_mean_mean(true));
  EXPECT_EQ(relu.route(), "conv_then") << relu.reason;
  // A mean over one spatial dimension only.
  json one = conv_t_scale_mean_mean();
  one["nodes"][5]["params"]["dim"] = {2};
  one["nodes"][5]["shape"] = {2, 6, 1, 20};
  one["nodes"][6]["params"]["dim"] = {2};
  one["nodes"][6]["shape"] = {2, 6, 1, 20};
  EXPECT_NE(match(one).route(), "conv_fold");
  // A forward convolution with a stride: its taps read every other input position.
  json strided = conv_t_scale_mean_mean();
  strided["nodes"][3]["op"] = "conv";
  strided["nodes"][3]["params"] = {{"dims", 2}, {"groups", 1}, {"in_channels", 4}, {"out_channels", 6},
                                   {"has_bias", true}, {"k0", 3}, {"k1", 3}, {"s0", 2}, {"s1", 2}, {"p0", 1},
                                   {"p1", 1}, {"d0", 1}, {"d1", 1}};
  strided["nodes"][1]["shape"] = {6, 4, 3, 3};
  for (int id : {3, 4}) strided["nodes"][id]["shape"] = {2, 6, 4, 5};
  auto s = match(strided);
  EXPECT_NE(s.route(), "conv_fold") << s.reason;
}

// The standalone kernel (the mean is the output) through the compile stage as the judge runs it, then its host
// code: the workspace it asks for, and a call with another shape refused before anything is launched.
TEST(SeedCompile, ConvFoldSeedBuildsAndItsHostCodeChecksTheCall) {
  json g = conv_t_scale_mean_mean();
  g["outputs"] = {ref(5)};
  g["nodes"].erase(6);
  auto m = match(g);
  ASSERT_TRUE(m.plan_as<ConvFoldPlan>()) << m.route() << ": " << m.reason;
  ASSERT_TRUE(fold_plan_of(m).steps.empty());
  auto src = m.plan->emit(CommentText("conv_t_mean.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed built;
  ASSERT_TRUE(build_and_load(*src, "conv_fold.cu", built));
#ifdef CUTEGEN_CUDA_LIB_DIR
  using ForwardWs = int (*)(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t, void*, size_t, cudaStream_t);
  auto forward_ws = reinterpret_cast<ForwardWs>(dlsym(built.lib->handle, "cutegen_forward_ws"));
  ASSERT_NE(forward_ws, nullptr);
  std::vector<cutegen_tensor> in = {fp32({2, 4, 8, 10}), fp32({4, 6, 3, 3}), fp32({6})};
  std::vector<cutegen_tensor> out = {fp32({2, 6, 1, 1})};
  alignas(16) static float dummy[16];  // never read on the host: every refusal comes before a launch
  for (auto& t : in) t.data = dummy;
  out[0].data = dummy;
  const size_t bytes = built.workspace_bytes(in.data(), 3, out.data(), 1);
  EXPECT_EQ(bytes, sizeof(double) * 4 * 2 * 4);  // four boxes per input plane, 2 x 4 planes
  EXPECT_EQ(forward_ws(in.data(), 3, out.data(), 1, dummy, bytes - 8, nullptr), CUTEGEN_ERROR_BAD_ARGUMENTS);
  auto other = in;
  other[0] = fp32({2, 4, 8, 12});
  other[0].data = dummy;
  EXPECT_EQ(forward_ws(other.data(), 3, out.data(), 1, dummy, bytes, nullptr), CUTEGEN_ERROR_UNSUPPORTED);
#else
  GTEST_SKIP() << kNoHostCuda;
#endif
}

TEST(SeedCompile, ConvFoldChainBuilds) {
  CUTEGEN_SLOW_COMPILE_TEST("the folded convolution with a chain after it; gpu_seed.py judges its problem");
  auto m = match(conv_t_mean_bias_lse());
  ASSERT_TRUE(m.plan_as<ConvFoldPlan>()) << m.route() << ": " << m.reason;
  auto src = m.plan->emit(CommentText("conv_t_mean_lse.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  RealCompiler compiler;
  ASSERT_TRUE(compiler.build_ok(*src, "conv_fold_chain.cu"));
}

}  // namespace
