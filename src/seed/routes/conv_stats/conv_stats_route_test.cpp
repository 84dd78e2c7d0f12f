// The conv_stats route on hand-written trace answers shaped like the worker's: which chains it takes (a norm with
// per-plane statistics, then a mean over the planes, after a convolution on the direct path), what each refusal
// leaves to conv_then, the kernel's text, and (slow tier) its build through the real compile stage and its
// workspace query on the host. Whether it computes the right numbers is the GPU's to say: `cutegen bench`
// KernelBench level 2's 23 and 27, and `cutegen eval problems/conv3d_groupnorm_mean.py` of its seed.
#include <gtest/gtest.h>

#include "common/slow_compile_tests.h"
#include "seed/routes/conv_stats/conv_stats_route.h"
#include "seed/routes/conv_then/conv_then_route.h"
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

const std::vector<int64_t> kStatsIn = {4, 3, 18, 20}, kStatsY = {4, 16, 16, 18};

json stats_conv_params(int in, int out) {
  return {{"dims", 2}, {"groups", 1}, {"in_channels", in}, {"out_channels", out}, {"has_bias", true},
          {"k0", 3}, {"k1", 3}, {"s0", 1}, {"s1", 1}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1}};
}

enum class StatsNorm { group, instance, batch, layer };

// conv (3 -> 16 channels, or `in` of them), [hardswish], a norm, then a mean over the channels and the planes
// (`over_channels`) or the planes alone -- KernelBench level 2's 23 and 27 at a small size, in 2-d.
json conv_norm_mean(StatsNorm norm, bool over_channels, bool hardswish = false, int in = 3, const char* reduce = "mean",
                    int64_t batch = 4, int64_t height = 18, int64_t width = 20) {
  const std::vector<int64_t> x = {batch, in, height, width}, y_shape = {batch, 16, height - 2, width - 2};
  json nodes = json::array({input(0, "x", x), param(1, "conv_weight", 1, {16, in, 3, 3}),
                            param(2, "conv_bias", 2, {16}), param(3, "norm_weight", 3, {16}),
                            param(4, "norm_bias", 4, {16}), node(5, "conv", {ref(0), ref(1), ref(2)},
                                                                 stats_conv_params(in, 16), y_shape)});
  int y = 5;
  if (hardswish) nodes.push_back(node(++y, "hardswish", {ref(5)}, json::object(), y_shape));
  const json affine = {{"eps", 1e-5}, {"affine", true}, {"has_weight", true}, {"has_bias", true}};
  json p = affine;
  const char* op = "group_norm";
  switch (norm) {
    case StatsNorm::group: p["num_groups"] = 4; break;
    case StatsNorm::instance: op = "instance_norm", p["track_running_stats"] = false, p["training"] = true; break;
    case StatsNorm::batch: op = "batch_norm", p["track_running_stats"] = true, p["training"] = true; break;
    case StatsNorm::layer: op = "layer_norm", p["normalized_ndim"] = 1; break;
  }
  nodes.push_back(node(y + 1, op, {ref(y), ref(3), ref(4)}, p, y_shape));
  const json dims = over_channels ? json{1, 2, 3} : json{2, 3};
  const std::vector<int64_t> out = over_channels ? std::vector<int64_t>{batch} : std::vector<int64_t>{batch, 16};
  json r = {{"dim", dims}, {"keepdim", false}, {"dtype", nullptr}};
  if (std::string(reduce) == "amax") r.erase("dtype");
  nodes.push_back(node(y + 2, reduce, {ref(y + 1)}, r, out));
  return graph(nodes, y + 2, 1, {"conv.weight", "conv.bias", "norm.weight", "norm.bias"});
}

const ConvStatsPlan& stats_plan_of(const SeedMatch& m) { return *m.plan_as<ConvStatsPlan>(); }

// The table's walk for the steps, as route_table.cpp gives it to the route.
Result<std::shared_ptr<const MatchedPlan>> stats_second(const OpGraph& after) {
  SeedMatch m = match_seed(after);
  if (!m.matched()) return Error{m.reason};
  return m.plan;
}

std::string stats_refusal(const json& j) {
  auto g = OpGraph::from_json(j);
  EXPECT_TRUE(g.ok());
  auto plan = match_conv_stats(*g, &stats_second);
  EXPECT_FALSE(plan.ok());
  return plan ? "" : plan.error().message;
}

}  // namespace

TEST(ConvStats, TheMeanOfAGroupNormAfterADirectConvolutionComesFromItsSums) {
  auto m = match(conv_norm_mean(StatsNorm::group, /*over_channels=*/true));
  ASSERT_TRUE(m.plan_as<ConvStatsPlan>()) << m.reason;
  EXPECT_EQ(m.route(), "conv_stats");
  const ConvStatsPlan& p = stats_plan_of(m);
  EXPECT_EQ(p.conv.path, ConvPlan::Path::direct);
  EXPECT_FALSE(p.batch_norm);
  EXPECT_EQ(p.norm_groups, 4);
  EXPECT_TRUE(p.over_channels);
  EXPECT_EQ(p.eps, 1e-5);
  // The norm's parameters as the problem's contract inputs: x, then the module's parameters in order.
  EXPECT_EQ((std::vector<int>{p.num_contract_inputs, p.norm_weight, p.norm_bias}), (std::vector<int>{5, 3, 4}));
  EXPECT_EQ(p.y_shape, kStatsY);
  EXPECT_EQ(p.output_shape, (std::vector<int64_t>{4}));
  EXPECT_TRUE(m.description().starts_with("convolution with each (image, channel)'s sum and sum of squares gathered"))
      << m.description();
  EXPECT_TRUE(contains(m.description(), "group_norm(y, norm_weight, norm_bias")) << m.description();
}

TEST(ConvStats, APointwiseHeadAndAMeanOverThePlanesAloneAreTakenToo) {
  auto m = match(conv_norm_mean(StatsNorm::group, /*over_channels=*/false, /*hardswish=*/true));
  ASSERT_TRUE(m.plan_as<ConvStatsPlan>()) << m.reason;
  const ConvStatsPlan& p = stats_plan_of(m);
  EXPECT_TRUE(p.conv.has_epilogue());  // hardswish: the sums are of its values
  EXPECT_FALSE(p.over_channels);
  EXPECT_EQ(p.output_shape, (std::vector<int64_t>{4, 16}));
}

// KernelBench level 2's 67 at a small size: a GELU, then the global average pool, with no norm between. conv_fold
// cannot fold it (GELU is not affine); the sums alone give it.
TEST(ConvStats, AMeanWithoutANormComesFromTheSumsAlone) {
  json j = conv_norm_mean(StatsNorm::group, /*over_channels=*/false);
  j["nodes"][5] = node(5, "conv", {ref(0), ref(1), ref(2)}, stats_conv_params(3, 16), kStatsY);
  j["nodes"][6] = node(6, "gelu", {ref(5)}, {{"approximate", "none"}}, kStatsY);
  j["nodes"][7] = node(7, "mean", {ref(6)}, {{"dim", {2, 3}}, {"keepdim", false}, {"dtype", nullptr}}, {4, 16});
  j["outputs"] = {ref(7)};
  auto m = match(j);
  ASSERT_TRUE(m.plan_as<ConvStatsPlan>()) << m.reason;
  const ConvStatsPlan& p = stats_plan_of(m);
  EXPECT_FALSE(p.has_norm);
  EXPECT_FALSE(p.over_channels);
  EXPECT_TRUE(p.conv.has_epilogue());
  EXPECT_TRUE(contains(m.description(), "gathered in its epilogue, then mean(y, dim=(2, 3)) from them (the "))
      << m.description();
  auto src = m.plan->emit(CommentText("conv_gelu_mean.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr bool kHasNorm = false;"));
  EXPECT_TRUE(contains(*src, "  if (kHasNorm)\n    group_stats_kernel<<<"));
}

TEST(ConvStats, InstanceAndBatchNormsHaveTheirOwnStatisticsGroups) {
  auto in = match(conv_norm_mean(StatsNorm::instance, true));
  ASSERT_TRUE(in.plan_as<ConvStatsPlan>()) << in.reason;
  EXPECT_FALSE(stats_plan_of(in).batch_norm);
  EXPECT_EQ(stats_plan_of(in).norm_groups, 0);  // one a channel, whatever the channel count of the call
  auto bn = match(conv_norm_mean(StatsNorm::batch, false));
  ASSERT_TRUE(bn.plan_as<ConvStatsPlan>()) << bn.reason;
  EXPECT_TRUE(stats_plan_of(bn).batch_norm);
}

// What the route refuses stays conv_then's, as before it existed; each refusal says why.
// KernelBench level 2's 23 as conv_then planned it: y and the norm's result pass the judge's cap, so the chain ran
// in passes over the batch. Nothing is stored here: the whole batch at once, every shape the full one.
TEST(ConvStats, AChainThatRanInPassesTakesTheWholeBatch) {
  const json j = conv_norm_mean(StatsNorm::group, true, false, 3, "mean", /*batch=*/64, 256, 256);
  auto g = OpGraph::from_json(j);
  ASSERT_TRUE(g.ok());
  auto chain = match_conv_then(*g, &stats_second);
  ASSERT_TRUE(chain.ok()) << chain.error().message;
  ASSERT_EQ(chain->batch, 64);
  EXPECT_LT(chain->batch_chunk, 64);
  auto m = match(j);
  ASSERT_TRUE(m.plan_as<ConvStatsPlan>()) << m.reason;
  const ConvStatsPlan& p = stats_plan_of(m);
  EXPECT_EQ(p.y_shape, (std::vector<int64_t>{64, 16, 254, 254}));
  EXPECT_EQ(p.conv.input_shape, (std::vector<int64_t>{64, 3, 256, 256}));
  EXPECT_EQ(p.conv.output_shape, p.y_shape);
  EXPECT_EQ(p.output_shape, (std::vector<int64_t>{64}));
}

TEST(ConvStats, WhatItDoesNotTakeStaysAChainAndSaysWhy) {
  EXPECT_EQ(match(conv_norm_mean(StatsNorm::group, true, false, /*in=*/16)).route(), "conv_then");
  EXPECT_EQ(stats_refusal(conv_norm_mean(StatsNorm::group, true, false, 16)),
            "the convolution runs on the TMA im2col path (statistics are gathered on the direct path: 16 input "
            "channels a group (the direct path is for at most 8))");
  EXPECT_EQ(match(conv_norm_mean(StatsNorm::layer, false)).route(), "conv_then");
  EXPECT_EQ(stats_refusal(conv_norm_mean(StatsNorm::layer, false)),
            "the norm's statistics are not per (image, group of channels) or per channel over the batch");
  EXPECT_EQ(match(conv_norm_mean(StatsNorm::group, true, false, 3, "amax")).route(), "conv_then");
}

TEST(ConvStats, TheKernelGathersSumsInTheConvolutionAndExportsOnlyTheWorkspacePair) {
  auto m = match(conv_norm_mean(StatsNorm::group, true, /*hardswish=*/true));
  ASSERT_TRUE(m.plan_as<ConvStatsPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("conv_gn_mean.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(src->starts_with("// Seed kernel for conv_gn_mean.py, written by cutegen without an LLM")) << *src;
  EXPECT_TRUE(contains(*src, "#define CIG_STATS 1  // set by the seed: sums and squares, not y (conv_stats)"));
  EXPECT_TRUE(contains(*src, "#define CIG_DIRECT 1  // set by the seed"));
  EXPECT_TRUE(contains(*src, "static int conv_forward_ws("));
  EXPECT_TRUE(contains(*src, "constexpr int kNormWeight = 3, kNormBias = 4;"));
  EXPECT_TRUE(contains(*src, "constexpr bool kBatchNorm = false;"));
  EXPECT_TRUE(contains(*src, "constexpr int64_t kNormGroups = 4;"));
  EXPECT_TRUE(contains(*src, "constexpr bool kOverChannels = true;"));
  EXPECT_TRUE(contains(*src, "constexpr double kEps = 1.0000000000000001e-05;"));
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
  for (const char* key : {"{{PROBLEM", "{{LIBRARY", "{{NORM_", "{{MEAN_", "{{CONV_", "{{NUM_", "{{EPS", "{{OVER_",
                          "{{OUTPUT_", "{{BATCH_", "{{Y_", "{{X_", "{{W_"})
    EXPECT_FALSE(contains(*src, key)) << key << " left unfilled";
}

TEST(SeedCompile, ConvStatsSeedBuildsPassesEveryStaticCheckAndSizesItsWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution's direct path gathering statistics, minutes of nvcc");
  auto m = match(conv_norm_mean(StatsNorm::group, false, /*hardswish=*/true));
  ASSERT_TRUE(m.plan_as<ConvStatsPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("conv_gn_mean.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_stats_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[5] = {fp32(kStatsIn), fp32({16, 3, 3, 3}), fp32({16}), fp32({16}), fp32({16})};
  const cutegen_tensor out = fp32({4, 16});
  // The sums (4 x 16 x 2 doubles, 1 KiB), the group statistics (4 x 4 x 2, 256 bytes), then the convolution's tap
  // table and weights: far less than y (18 KiB a channel plane x 64).
  const size_t asked = workspace_bytes(in, 5, &out, 1);
  EXPECT_GT(asked, size_t{1024 + 256});
  EXPECT_LT(asked, size_t{4} * 16 * 16 * 18 * 4);
  EXPECT_EQ(workspace_bytes(in, 4, &out, 1), 0u);
  // Another shape of the same problem sizes its own: twice the images, twice the sums and the group statistics.
  const cutegen_tensor in8[5] = {fp32({8, 3, 18, 20}), fp32({16, 3, 3, 3}), fp32({16}), fp32({16}), fp32({16})};
  const cutegen_tensor out8 = fp32({8, 16});
  EXPECT_EQ(workspace_bytes(in8, 5, &out8, 1), asked + 1024 + 256);
#endif
}

// Inside a larger chain (prologue_then: a convolution of a computed value) the parts are single seeds: the
// convolution, the norm and the mean, each its own part, as before conv_stats existed -- not conv_stats's file,
// whose library convolution must stay at the file's scope.
TEST(ConvStats, InsideALargerChainThePartsStaySingleSeeds) {
  const json affine = {{"eps", 1e-5}, {"affine", true}, {"has_weight", true}, {"has_bias", true}, {"num_groups", 4}};
  const json j = graph(
      json::array({input(0, "x", kStatsIn), param(1, "conv_weight", 1, {16, 3, 3, 3}), param(2, "conv_bias", 2, {16}),
                   param(3, "norm_weight", 3, {16}), param(4, "norm_bias", 4, {16}),
                   node(5, "relu", {ref(0)}, json::object(), kStatsIn),
                   node(6, "conv", {ref(5), ref(1), ref(2)}, stats_conv_params(3, 16), kStatsY),
                   node(7, "group_norm", {ref(6), ref(3), ref(4)}, affine, kStatsY),
                   node(8, "mean", {ref(7)}, {{"dim", {1, 2, 3}}, {"keepdim", false}, {"dtype", nullptr}}, {4})}),
      8, 1, {"conv.weight", "conv.bias", "norm.weight", "norm.bias"});
  auto m = match(j);
  ASSERT_TRUE(m.matched()) << m.reason;
  EXPECT_EQ(m.route(), "prologue_then");
  EXPECT_FALSE(contains(m.description(), "sum of squares gathered")) << m.description();
  auto src = m.plan->emit(CommentText("relu_conv_gn_mean.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_FALSE(contains(*src, "#define CIG_STATS 1"));
}
