// conv_then's pooled head: the folded taps against an average pooling of a convolution computed as written (in
// double, on random numbers, for many geometries), the match and what keeps the pooling a step, the chained text,
// and (slow tier) the seed through the real compile stage and its workspace query on the host.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "common/slow_compile_tests.h"
#include "seed/routes/conv_then/conv_then_route.h"
#include "seed/routes/conv_then/pooled_head.h"
#include "seed/seed.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/host_library.h"
#include "seed/testdata/kernel_text.h"
#include "seed/testdata/real_compiler.h"

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
using namespace cutegen::seed::testing;

namespace {

// One dimension: avg_pool(conv(x)) as PyTorch computes it (padding with zeros, floor mode), in double.
std::vector<double> conv_then_pool(const std::vector<double>& x, const std::vector<double>& w, int64_t s, int64_t pad,
                                   int64_t d, int64_t kp, int64_t sp) {
  const int64_t k = static_cast<int64_t>(w.size()), n = static_cast<int64_t>(x.size());
  const int64_t conv_len = (n + 2 * pad - d * (k - 1) - 1) / s + 1;
  std::vector<double> y(static_cast<std::size_t>(std::max<int64_t>(conv_len, 0)));
  for (int64_t o = 0; o < conv_len; ++o)
    for (int64_t t = 0; t < k; ++t)
      if (const int64_t i = o * s + t * d - pad; i >= 0 && i < n) y[o] += w[t] * x[i];
  const int64_t pooled = conv_len < kp ? 0 : (conv_len - kp) / sp + 1;
  std::vector<double> z(static_cast<std::size_t>(pooled));
  for (int64_t q = 0; q < pooled; ++q) {
    for (int64_t j = 0; j < kp; ++j) z[q] += y[q * sp + j];
    z[q] /= static_cast<double>(kp);
  }
  return z;
}

// The same through the folded convolution: stride s * sp, dilation 1, the same padding, W' from folded_taps.
std::vector<double> folded_conv(const std::vector<double>& x, const std::vector<double>& w, int64_t s, int64_t pad,
                                int64_t d, int64_t kp, int64_t sp) {
  const auto taps = folded_taps(static_cast<int64_t>(w.size()), s, d, kp);
  std::vector<double> wf(taps.size());
  for (std::size_t u = 0; u < taps.size(); ++u) {
    for (int t : taps[u]) wf[u] += w[static_cast<std::size_t>(t)];
    wf[u] /= static_cast<double>(kp);
  }
  const int64_t kf = static_cast<int64_t>(wf.size()), n = static_cast<int64_t>(x.size()), stride = s * sp;
  const int64_t len = n + 2 * pad < kf ? 0 : (n + 2 * pad - kf) / stride + 1;
  std::vector<double> z(static_cast<std::size_t>(len));
  for (int64_t q = 0; q < len; ++q)
    for (int64_t u = 0; u < kf; ++u)
      if (const int64_t i = q * stride + u - pad; i >= 0 && i < n) z[q] += wf[u] * x[i];
  return z;
}

// A forward convolution of `k` channels, then `between` (an op on it or none), then an average pooling, then a
// sigmoid: KernelBench level 2's 65 at a small size.
json conv_pool_sigmoid(const std::string& between = "mul", const json& pool_params = json::object()) {
  const std::vector<int64_t> in = {4, 3, 18, 20}, y = {4, 8, 16, 18}, z = {4, 8, 4, 4};
  json conv_params = {{"dims", 2}, {"groups", 1}, {"in_channels", 3}, {"out_channels", 8}, {"has_bias", true},
                      {"k0", 3}, {"k1", 3}, {"s0", 1}, {"s1", 1}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1}};
  json pool = {{"dims", 2}, {"k0", 4}, {"k1", 4}, {"s0", 4}, {"s1", 4}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1},
               {"ceil_mode", false}, {"count_include_pad", true}, {"divisor_override", nullptr}};
  for (auto& [key, value] : pool_params.items()) pool[key] = value;
  json nodes = json::array({input(0, "x", in), param(1, "conv_weight", 1, {8, 3, 3, 3}), param(2, "conv_bias", 2, {8}),
                            param(3, "scale", 3, {8, 1, 1})});
  nodes.push_back(node(4, "conv", {ref(0), ref(1), ref(2)}, conv_params, y));
  // mul: by the per-channel scale (affine); relu: not affine.
  nodes.push_back(between == "relu" ? node(5, "relu", {ref(4)}, json::object(), y)
                                    : node(5, "mul", {ref(4), ref(3)}, json::object(), y));
  nodes.push_back(node(6, "avg_pool", {ref(5)}, pool, z));
  nodes.push_back(node(7, "sigmoid", {ref(6)}, json::object(), z));
  return graph(nodes, 7, 1, {"conv.weight", "conv.bias", "scale"});
}

const ConvThenPlan& pooled_plan_of(const SeedMatch& m) { return *m.plan_as<ConvThenPlan>(); }

}  // namespace

TEST(PooledHead, FoldedTapsComputeThePoolingOfTheConvolution) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  int geometries = 0;
  for (int64_t n : {9, 16, 23})
    for (int64_t k : {1, 2, 3, 5})
      for (int64_t s : {1, 2, 3})
        for (int64_t d : {1, 2})
          for (int64_t pad : {0, 1, 2})
            for (int64_t kp : {1, 2, 3, 4})
              for (int64_t sp : {1, 2, 4}) {
                if (pad > d * (k - 1) / 2 || n + 2 * pad < d * (k - 1) + 1) continue;  // PyTorch's own limits
                std::vector<double> x(static_cast<std::size_t>(n)), w(static_cast<std::size_t>(k));
                for (auto& v : x) v = value(rng);
                for (auto& v : w) v = value(rng);
                const auto want = conv_then_pool(x, w, s, pad, d, kp, sp);
                const auto got = folded_conv(x, w, s, pad, d, kp, sp);
                const std::string where = fmt::format("n={} k={} s={} d={} pad={} kp={} sp={}", n, k, s, d, pad, kp, sp);
                ASSERT_EQ(got.size(), want.size()) << where;  // the folded convolution's output is the pooled size
                for (std::size_t q = 0; q < want.size(); ++q) ASSERT_NEAR(got[q], want[q], 1e-12) << where << " q=" << q;
                ++geometries;
              }
  EXPECT_GT(geometries, 500);
}

TEST(PooledHead, EachFoldedTapGathersTheTapsItsWindowPositionsReach) {
  // k = 3, stride 1, window 4 (KernelBench 65): u = j + t.
  EXPECT_EQ(folded_taps(3, 1, 1, 4),
            (std::vector<std::vector<int>>{{0}, {0, 1}, {0, 1, 2}, {0, 1, 2}, {1, 2}, {2}}));
  // Stride 2 and dilation 2 leave odd folded taps empty: W' is zero there.
  EXPECT_EQ(folded_taps(2, 2, 2, 2), (std::vector<std::vector<int>>{{0}, {}, {0, 1}, {}, {1}}));
}

TEST(PooledHead, AnAveragePoolingOfAnAffineHeadFoldsIntoTheWeights) {
  auto m = match(conv_pool_sigmoid());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = pooled_plan_of(m);
  ASSERT_TRUE(p.pooled.has_value());
  // The head is the folded convolution: 6 x 6 taps at stride 4, writing the pooled tensor.
  EXPECT_EQ((std::vector<int64_t>{p.head.kernel[1], p.head.kernel[2], p.head.stride[1], p.head.stride[2]}),
            (std::vector<int64_t>{6, 6, 4, 4}));
  EXPECT_EQ(p.head.dilation[2], 1);
  EXPECT_EQ(p.head_shape, (std::vector<int64_t>{4, 8, 4, 4}));
  EXPECT_EQ(p.head.output_shape, p.head_shape);
  EXPECT_EQ(p.traced.kernel[2], 3);  // the weight the head folds is the traced one
  EXPECT_TRUE(p.head.has_epilogue());  // the per-channel scale, applied to the pooled value
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].seed->route(), "pointwise");
  EXPECT_TRUE(m.description().starts_with("convolution with the average pooling folded into its weights, then "))
      << m.description();
  auto src = m.plan->emit(CommentText("conv_pool_sigmoid.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kOrigShape[kRank] = { 8, 3, 3, 3 };")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kFoldedShape[kRank] = { 8, 3, 6, 6 };")) << *src;
  EXPECT_TRUE(contains(*src, "__constant__ int kFirst2[kF2 + 1] = { 0, 1, 3, 6, 9, 11, 12 };")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr double kScale = 1.0 / 16.0;")) << *src;
  EXPECT_TRUE(contains(*src, "pooled_forward_ws(inputs, kNumInputs, &out, 1, base + used, part, stream)")) << *src;
  EXPECT_TRUE(contains(*src, "{2, false, 1, {1, 4, 4}, {0, 0, 0}, {1, 1, 1}}")) << *src;  // kSpec: the folded stride
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
}

TEST(PooledHead, WhatDoesNotFoldStaysAPoolingStep) {
  const auto pooling_is_a_step = [](const json& g) {
    auto m = match(g);
    if (!m.plan_as<ConvThenPlan>()) return ::testing::AssertionFailure() << m.reason;
    const ConvThenPlan& p = pooled_plan_of(m);
    if (p.pooled) return ::testing::AssertionFailure() << "folded: " << m.description();
    if (p.steps.empty() || p.steps[0].seed->route() != "pool")
      return ::testing::AssertionFailure() << "first step: " << (p.steps.empty() ? "none" : p.steps[0].seed->route());
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(pooling_is_a_step(conv_pool_sigmoid("relu")));  // not affine: relu does not commute with the mean
  EXPECT_TRUE(pooling_is_a_step(conv_pool_sigmoid("mul", {{"p0", 1}, {"p1", 1}})));  // padded windows
  EXPECT_TRUE(pooling_is_a_step(conv_pool_sigmoid("mul", {{"ceil_mode", true}})));
  EXPECT_TRUE(pooling_is_a_step(conv_pool_sigmoid("mul", {{"divisor_override", 3}})));
  json max = conv_pool_sigmoid();
  max["nodes"][6]["op"] = "max_pool";
  max["nodes"][6]["params"]["return_indices"] = false;
  EXPECT_TRUE(pooling_is_a_step(max));
}

TEST(PooledHead, TheMatchSaysWhyItDoesNotFold) {
  auto g = OpGraph::from_json(conv_pool_sigmoid("relu"));
  ASSERT_TRUE(g.ok());
  auto m = match(conv_pool_sigmoid("relu"));
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = pooled_plan_of(m);
  EXPECT_EQ(match_pooled_head(*g, g->node(4), 5, p.head).error().message,
            "the ops between the convolution and the pooling are not affine in it");
  auto padded = OpGraph::from_json(conv_pool_sigmoid("mul", {{"p0", 1}, {"p1", 1}}));
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(match_pooled_head(*padded, padded->node(4), 5, p.head).error().message,
            "the pooling pads (its padded windows are not a convolution's)");
  // Windows of 15 with the 3 taps: (15 - 1) + (3 - 1) + 1 = 17 folded taps, over the library's 16.
  auto wide = OpGraph::from_json(conv_pool_sigmoid("mul", {{"k0", 15}, {"k1", 15}, {"s0", 15}, {"s1", 15}}));
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(match_pooled_head(*wide, wide->node(4), 5, p.head).error().message,
            "the folded kernel would have 17 taps in a dimension (the library convolution takes 16)");
  ConvPlan transposed = p.head;
  transposed.kind = ConvPlan::Kind::transposed;
  EXPECT_EQ(match_pooled_head(*g, g->node(4), 5, transposed).error().message,
            "a transposed convolution (the fold takes forward ones)");
}

TEST(SeedCompile, PooledHeadSeedBuildsPassesEveryStaticCheckAndSizesItsWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution on folded weights in a chain, about a minute of nvcc");
  auto m = match(conv_pool_sigmoid());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  ASSERT_TRUE(pooled_plan_of(m).pooled.has_value());
  auto src = m.plan->emit(CommentText("conv_pool_sigmoid.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "pooled_head_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[4] = {fp32({4, 3, 18, 20}), fp32({8, 3, 3, 3}), fp32({8}), fp32({8, 1, 1})};
  const cutegen_tensor z = fp32({4, 8, 4, 4});
  // The pooled y (2 KiB), then the folded weight (8 x 3 x 36 floats, 3,456 bytes -> 3,584) and the convolution's
  // own tables: far below the unpooled 4 x 8 x 16 x 18 floats (36 KiB) the step chain stored.
  const size_t asked = workspace_bytes(in, 4, &z, 1);
  EXPECT_GT(asked, size_t{2048 + 3584});
  // A weight of another shape is not the traced one: the head does not fold it.
  const cutegen_tensor other[4] = {fp32({4, 3, 18, 20}), fp32({8, 3, 5, 5}), fp32({8}), fp32({8, 1, 1})};
  EXPECT_EQ(workspace_bytes(other, 4, &z, 1), 0u);
#endif
}
