// The conv_then route on hand-written trace answers shaped like the worker's: where the graph splits, what
// each step is, the refusals, the chained kernel's text, and (slow tier) a two-step seed through the real
// compile stage and its workspace query on the host.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/slow_compile_tests.h"
#include "seed/graph_util.h"
#include "seed/routes/conv/conv_plan.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_then/conv_then_route.h"
#include "seed/routes/norm/norm_route.h"
#include "seed/routes/pointwise/pointwise_route.h"
#include "seed/routes/row_softmax/row_softmax_route.h"
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

json then_conv_params(int in, int out) {
  return {{"dims", 2}, {"groups", 1}, {"in_channels", in}, {"out_channels", out}, {"has_bias", true},
          {"k0", 3}, {"k1", 3}, {"s0", 1}, {"s1", 1}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1}};
}
const std::vector<int64_t> kThenIn = {8, 4, 18, 20}, kThenOut = {8, 16, 16, 18};

// KernelBench level 2's 19 at a small size: GroupNorm(gelu(conv(x))), then (with `scale`) * 2.
json conv_gelu_groupnorm(bool scale = false) {
  json nodes = json::array(
      {input(0, "x", kThenIn), param(1, "conv_weight", 1, {16, 4, 3, 3}), param(2, "conv_bias", 2, {16}),
       param(3, "gn_weight", 3, {16}), param(4, "gn_bias", 4, {16}),
       node(5, "conv", {ref(0), ref(1), ref(2)}, then_conv_params(4, 16), kThenOut),
       node(6, "gelu", {ref(5)}, {{"approximate", "none"}}, kThenOut),
       node(7, "group_norm", {ref(6), ref(3), ref(4)},
            {{"eps", 1e-5}, {"affine", true}, {"num_groups", 4}, {"has_weight", true}, {"has_bias", true}},
            kThenOut)});
  if (scale) nodes.push_back(node(8, "mul", {ref(7), num(2.0)}, json::object(), kThenOut));
  return graph(nodes, scale ? 8 : 7, 1, {"conv.weight", "conv.bias", "gn.weight", "gn.bias"});
}

const ConvThenPlan& plan_of(const SeedMatch& m) { return *m.plan_as<ConvThenPlan>(); }

}  // namespace

TEST(ConvThen, ANormAfterTheConvolutionsEpilogueIsASecondSeedOnItsResult) {
  auto m = match(conv_gelu_groupnorm());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  EXPECT_EQ(m.route(), "conv_then");
  const ConvThenPlan& p = plan_of(m);
  EXPECT_TRUE(p.head.has_epilogue());  // gelu is fused into the convolution's store
  EXPECT_EQ(p.head_shape, kThenOut);
  EXPECT_EQ(p.head_bytes, 8 * 16 * 16 * 18 * 4);
  EXPECT_EQ((std::vector<int>{p.num_contract_inputs, p.head.x_input, p.head.weight_input, p.head.bias_input}),
            (std::vector<int>{5, 0, 1, 2}));
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].seed->route(), "norm");
  EXPECT_EQ(p.steps[0].bytes, 0);  // the last step writes the output
  EXPECT_TRUE(m.description().starts_with("convolution, then normalisation y = group_norm(y, gn_weight, gn_bias"))
      << m.description();
  EXPECT_TRUE(contains(m.description(), ": y = gelu(y, approximate='none'), y = conv2d(x, conv_weight, conv_bias"))
      << m.description();
}

TEST(ConvThen, TheSecondSeedSeesTheConvolutionsResultAsForwardInputZero) {
  auto g = OpGraph::from_json(conv_gelu_groupnorm());
  ASSERT_TRUE(g.ok());
  const OpGraph after = graph_after(*g, 6);
  const Node& y = after.node(6);
  EXPECT_EQ(y.op, Op::input);
  EXPECT_EQ(y.index, 0);
  EXPECT_TRUE(y.args.empty());
  EXPECT_EQ(y.type->shape, kThenOut);
  // The convolution and x are no longer reachable from the output.
  for (int id : reachable(after)) EXPECT_NE(after.node(id).op, Op::conv);
  EXPECT_EQ(match_seed(after).route(), "norm");
}

// A pointwise tail after the norm is no seed of its own: the norm's store writes it (store_epilogue.h), so the
// chain has one step, no intermediate after y, and the norm's kernel ends in the tail's own statement.
TEST(ConvThen, APointwiseTailAfterANormIsFoldedIntoTheNormsStore) {
  auto m = match(conv_gelu_groupnorm(/*scale=*/true));
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = plan_of(m);
  ASSERT_EQ(p.steps.size(), 1u);  // was two seeds: the norm, then the pointwise * 2
  EXPECT_EQ(p.steps[0].seed->route(), "norm");
  EXPECT_EQ(p.steps[0].shape, kThenOut);
  EXPECT_EQ(p.steps[0].bytes, 0);  // it writes the output, as the pointwise step did
  const auto* norm = dynamic_cast<const TypedPlan<NormPlan>*>(p.steps[0].seed.get());
  ASSERT_NE(norm, nullptr);
  ASSERT_TRUE(norm->plan().epilogue);
  EXPECT_EQ(norm->plan().epilogue->value_names, (std::vector<std::string>{"x0"}));
  EXPECT_TRUE(norm->plan().epilogue->operands.empty());
  EXPECT_TRUE(contains(m.description(), "then normalisation y = group_norm(y, gn_weight, gn_bias, affine=True, "
                                        "eps=1e-05, num_groups=4), then pointwise chain y = mul(y, 2) (folded into its "
                                        "store): y = "))
      << m.description();

  auto src = m.plan->emit(CommentText("conv_gn_scale.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "namespace seed_step1 {")) << *src;
  EXPECT_FALSE(contains(*src, "namespace seed_step2 {")) << *src;
  EXPECT_FALSE(contains(*src, "pointwise_kernel")) << *src;
  EXPECT_FALSE(contains(*src, "constexpr size_t kOffset1")) << *src;  // y is the only intermediate
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
  // The tail's statement, in the norm's namespace, wraps every store of the norm.
  EXPECT_TRUE(contains(*src, "  const float x0 = __fadd_rn(v, -0.f);  // the seed's value\n"
                             "  const float v8 = (x0 * 2.f);  // mul(x0, 2)\n"
                             "  return v8;\n"))
      << *src;
  EXPECT_TRUE(contains(*src, "element(gY, g, t) = store_epilogue(ep, apply(v[u], c, gW, gB, channel(g, t)), "
                             "&element(gY, g, t) - y);"))
      << *src;
  EXPECT_TRUE(contains(*src, "group_apply_kernel<<<grid, kThreads, 0, stream>>>(x, y, partials, w, b, channels, ep);"))
      << *src;
  EXPECT_FALSE(contains(*src, "{{EPILOGUE") || contains(*src, "{{STORE(")) << *src;  // every placeholder filled
}

// Two steps that do not fold (a norm, then a pooling): each in its own namespace, the second reading the first's
// result from the workspace.
TEST(ConvThen, ANormThenAPoolingAreTwoSeedsAfterTheConvolution) {
  json g = conv_gelu_groupnorm();
  g["nodes"].push_back(node(8, "max_pool", {ref(7)},
                            {{"dims", 2}, {"k0", 2}, {"k1", 2}, {"s0", 2}, {"s1", 2}, {"p0", 0}, {"p1", 0},
                             {"d0", 1}, {"d1", 1}, {"ceil_mode", false}, {"return_indices", false}},
                            {8, 16, 8, 9}));
  g["outputs"] = {ref(8)};
  auto m = match(g);
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = plan_of(m);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].seed->route(), "norm");
  EXPECT_EQ(p.steps[0].shape, kThenOut);
  EXPECT_EQ(p.steps[0].bytes, 8 * 16 * 16 * 18 * 4);
  EXPECT_EQ(p.steps[1].seed->route(), "pool");

  auto src = m.plan->emit(CommentText("conv_gn_pool.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  // Each step in its own namespace, its entry points static; the only contract entry points are the chain's.
  EXPECT_TRUE(contains(*src, "namespace seed_step1 {")) << *src;
  EXPECT_TRUE(contains(*src, "namespace seed_step2 {")) << *src;
  EXPECT_TRUE(contains(*src, "static int conv_forward_ws(")) << *src;
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
  // The intermediates: y at 0, the norm's result after it; step 2 reads it as its forward input 0.
  EXPECT_TRUE(contains(*src, "constexpr int64_t kShape0[] = {8, 16, 16, 18};  // y")) << *src;
  EXPECT_TRUE(contains(*src, fmt::format("constexpr size_t kOffset1 = {};", 8 * 16 * 16 * 18 * 4))) << *src;
  EXPECT_TRUE(contains(*src, "const StepInputs in2(inputs, intermediate(query ? nullptr : base + kOffset1, kShape1));"))
      << *src;
  // No header is included inside a step's namespace.
  for (const char* step : {"seed_step1", "seed_step2"}) {
    const auto open = src->find(fmt::format("namespace {} {{", step));
    const auto close = src->find(fmt::format("}}  // namespace {}", step));
    ASSERT_LT(open, close);
    EXPECT_EQ(src->substr(open, close - open).find("#include"), std::string::npos) << step;
  }
  // Without a folded step the norm's and the pooling's kernels are their routes' seeds as they are.
  EXPECT_FALSE(contains(*src, "store_epilogue")) << *src;
}

// KernelBench level 2's 85 at a small size: conv -> GroupNorm -> * scale (a per-channel parameter) -> max_pool ->
// clamp. Four seeds after the convolution before pointwise steps were folded (the norm, the broadcast scale, the
// pooling, the clamp); now two, one kernel fewer for each folded step: the scale in the norm's store, reading the
// parameter at the element's channel, and the clamp in the pooling's store.
json conv_groupnorm_scale_maxpool_clamp() {
  json g = conv_gelu_groupnorm();
  g["nodes"].push_back(param(8, "scale", 5, {16, 1, 1}));
  g["nodes"].push_back(node(9, "mul", {ref(7), ref(8)}, json::object(), kThenOut));
  g["nodes"].push_back(node(10, "max_pool", {ref(9)},
                            {{"dims", 2}, {"k0", 4}, {"k1", 4}, {"s0", 4}, {"s1", 4}, {"p0", 0}, {"p1", 0},
                             {"d0", 1}, {"d1", 1}, {"ceil_mode", false}, {"return_indices", false}},
                            {8, 16, 4, 4}));
  g["nodes"].push_back(node(11, "clamp", {ref(10)}, {{"min", 0.0}, {"max", 1.0}}, {8, 16, 4, 4}));
  g["params"].push_back("scale");
  g["outputs"] = {ref(11)};
  return g;
}

TEST(ConvThen, EachPointwiseStepIsFoldedIntoTheStoreOfTheStepBeforeIt) {
  auto m = match(conv_groupnorm_scale_maxpool_clamp());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = plan_of(m);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].seed->route(), "norm");
  EXPECT_EQ(p.steps[0].shape, kThenOut);
  EXPECT_EQ(p.steps[0].bytes, 8 * 16 * 16 * 18 * 4);  // the scaled values, which the pooling reads
  EXPECT_EQ(p.steps[1].seed->route(), "pool");
  EXPECT_EQ(p.steps[1].shape, (std::vector<int64_t>{8, 16, 4, 4}));
  EXPECT_EQ(p.steps[1].bytes, 0);
  const auto* norm = dynamic_cast<const TypedPlan<NormPlan>*>(p.steps[0].seed.get());
  ASSERT_NE(norm, nullptr);
  ASSERT_TRUE(norm->plan().epilogue);
  ASSERT_EQ(norm->plan().epilogue->operands.size(), 1u);
  const EpilogueOperand& scale = norm->plan().epilogue->operands[0];
  EXPECT_EQ(scale.input, 5);
  EXPECT_EQ(scale.size, 16);
  EXPECT_EQ(scale.strides, (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_TRUE(contains(m.description(), "then broadcast pointwise chain y = mul(y, scale) (folded into its store), "
                                        "then pooling y = max_pool2d(y, kernel=(4, 4), stride=(4, 4), padding=(0, 0), "
                                        "dilation=(1, 1)), then pointwise chain y = clamp(y, max=1, min=0) (folded into "
                                        "its store): y = "))
      << m.description();

  auto src = m.plan->emit(CommentText("conv_gn_scale_pool_clamp.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_FALSE(contains(*src, "// Step 3:")) << *src;
  EXPECT_FALSE(contains(*src, "broadcast_kernel")) << *src;
  EXPECT_FALSE(contains(*src, "constexpr size_t kOffset2")) << *src;  // y and the scaled norm: two intermediates
  // The scale at the element's channel: e / (16 * 18) % 16 of an (8, 16, 16, 18) result.
  EXPECT_TRUE(contains(*src, "  const float x1 = make_tensor(make_gmem_ptr(ep.x1), "
                             "make_layout(make_shape(int64_t{16})))(e / 288 % 16);  // scale\n"
                             "  const float v9 = (x0 * x1);  // mul(y, scale)\n"))
      << *src;
  EXPECT_TRUE(contains(*src, "  ep.x1 = cutegen::data_as<const float>(inputs[5], CUTEGEN_FLOAT32);\n")) << *src;
  // The clamp in the pooling's store, with the pointwise table's helpers, which the pooling's template lacks.
  const auto step2 = src->find("namespace seed_step2 {");
  ASSERT_NE(step2, std::string::npos);
  const std::string pool = src->substr(step2);
  EXPECT_TRUE(contains(pool, "  const float v11 = clamp_hi(clamp_lo(x0, 0.f), 1.f);  // clamp(x0, max=1, min=0)\n"))
      << pool;
  EXPECT_TRUE(contains(pool, "__device__ __forceinline__ float clamp_lo(float v, float lo)")) << pool;
  EXPECT_TRUE(contains(pool, "      gY(ow, oh, od, plane) = store_epilogue(ep, best, t);\n")) << pool;
  EXPECT_TRUE(contains(pool, "(x, y, ep);")) << pool;
  EXPECT_FALSE(contains(*src, "{{EPILOGUE") || contains(*src, "{{STORE(")) << *src;  // every placeholder filled
}

// What stays a kernel of its own: a step that broadcasts the previous result (its element e is not the previous
// element e), and a step after a library kernel, whose file is read as it is.
TEST(ConvThen, APointwiseStepThatBroadcastsThePreviousResultStaysASeedOfItsOwn) {
  json g = conv_gelu_groupnorm();
  g["nodes"][7] = node(7, "mean", {ref(6)}, {{"dim", 1}, {"keepdim", true}, {"dtype", nullptr}}, {8, 1, 16, 18});
  g["nodes"][4] = param(4, "bias", 4, {16, 1, 1});
  g["nodes"].push_back(node(8, "add", {ref(7), ref(4)}, {{"alpha", 1}}, kThenOut));
  g["outputs"] = {ref(8)};
  auto m = match(g);
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = plan_of(m);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].seed->route(), "reduce");
  EXPECT_EQ(p.steps[1].seed->route(), "broadcast");
  EXPECT_FALSE(contains(m.description(), "folded")) << m.description();

  RowSoftmaxPlan softmax{.shape = {4, 65536}, .num_contract_inputs = 1, .pattern = "softmax(y, dim=1)", .dim = 1,
                         .outer = 4, .extent = 65536, .inner = 1, .kernel = SoftmaxKernel::library_cluster};
  PointwisePlan scale{.dtype = "float32", .shape = {4, 65536}, .num_contract_inputs = 1, .tensor_inputs = {0},
                      .tensor_names = {"y"}, .steps = {{"v2", "(x0 * 2.f)", "mul(x0, 2)"}}, .result = "v2",
                      .pattern = "mul(y, 2)"};
  std::vector<ThenStep> steps = {
      {.seed = matched_plan<kRowSoftmaxRoute>(softmax), .shape = {4, 65536}, .bytes = 4 * 65536 * 4},
      {.seed = matched_plan<kPointwiseRoute>(scale), .shape = {4, 65536}, .bytes = 0}};
  fold_pointwise_steps(steps);
  EXPECT_EQ(steps.size(), 2u) << "the library's cluster softmax takes no folded step";
  softmax.kernel = SoftmaxKernel::row_template;
  steps[0].seed = matched_plan<kRowSoftmaxRoute>(softmax);
  fold_pointwise_steps(steps);
  ASSERT_EQ(steps.size(), 1u) << "the row template does";
  EXPECT_EQ(steps[0].bytes, 0);
  EXPECT_EQ(steps[0].seed->pattern(), "softmax(y, dim=1), then mul(y, 2) (folded into its store)");
  auto text = steps[0].seed->emit(CommentText("softmax_scale.py"));
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_TRUE(contains(*text, "frag(i) = store_epilogue(ep, expf(frag(i) - row.max) * inv, r * n + c * kVec + i);"))
      << *text;
}

// Two steps of one route (KernelBench level 2's 72: two average poolings): the second's knobs are renamed, so
// neither's #define sets the other's and the tuner sees each once.
TEST(ConvThen, TwoStepsOfOneRouteGetTheirOwnKnobs) {
  json g = conv_gelu_groupnorm();
  json pool = {{"dims", 2}, {"k0", 2}, {"k1", 2}, {"s0", 2}, {"s1", 2}, {"p0", 0}, {"p1", 0},
               {"d0", 1}, {"d1", 1}, {"ceil_mode", false}, {"return_indices", false}};
  g["nodes"].push_back(node(8, "max_pool", {ref(7)}, pool, {8, 16, 8, 9}));
  g["nodes"].push_back(node(9, "max_pool", {ref(8)}, pool, {8, 16, 4, 4}));
  g["outputs"] = {ref(9)};
  auto m = match(g);
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = plan_of(m);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[1].seed->route(), "pool");
  EXPECT_EQ(p.steps[2].seed->route(), "pool");
  auto src = m.plan->emit(CommentText("two_pools.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "// cutegen:knob POOL_THREADS in")) << *src;
  EXPECT_TRUE(contains(*src, "// cutegen:knob S3_POOL_THREADS in")) << *src;
  EXPECT_TRUE(contains(*src, "#define S3_POOL_THREADS ")) << *src;
  const auto step3 = src->find("namespace seed_step3 {");
  ASSERT_NE(step3, std::string::npos);
  EXPECT_EQ(src->find("POOL_THREADS", step3), src->find("S3_POOL_THREADS", step3) + 3)
      << "step 3 reads only its own knob";
}

// KernelBench level 2's 67 at a small size: F.adaptive_avg_pool2d(gelu(conv(x)), 1).squeeze(-1).squeeze(-1), the
// pooling traced as a mean over (2, 3) with keepdim. 16 input channels, so the convolution is on the TMA path and
// the graph a chain (on the direct path it is conv_stats's: conv_stats_route_test.cpp).
json conv_gelu_global_average() {
  json g = conv_gelu_groupnorm();
  g["nodes"][0] = input(0, "x", {8, 16, 18, 20});
  g["nodes"][1] = param(1, "conv_weight", 1, {16, 16, 3, 3});
  g["nodes"][5] = node(5, "conv", {ref(0), ref(1), ref(2)}, then_conv_params(16, 16), kThenOut);
  g["nodes"][7] = node(7, "mean", {ref(6)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, {8, 16, 1, 1});
  g["nodes"].push_back(node(8, "Tensor.squeeze", {ref(7)}, json::object(), {8, 16, 1}));
  g["nodes"].push_back(node(9, "Tensor.squeeze", {ref(8)}, json::object(), {8, 16}));
  g["nodes"][8]["known"] = false;
  g["nodes"][9]["known"] = false;
  g["outputs"] = {ref(9)};
  return g;
}

TEST(ConvThen, AGlobalAveragePoolIsOneReductionOverTheMergedSpatialDims) {
  auto m = match(conv_gelu_global_average());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = plan_of(m);
  EXPECT_TRUE(p.head.has_epilogue());  // gelu in the convolution's store
  ASSERT_EQ(p.steps.size(), 1u);       // the squeezes are how the output holds the means: no step of their own
  ASSERT_EQ(p.steps[0].seed->route(), "reduce");
  const auto* reduce = dynamic_cast<const TypedPlan<ReducePlan>*>(p.steps[0].seed.get());
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ((std::vector<int64_t>{reduce->plan().outer, reduce->plan().extent, reduce->plan().inner}),
            (std::vector<int64_t>{8 * 16, 16 * 18, 1}));
  EXPECT_EQ(p.steps[0].shape, (std::vector<int64_t>{8, 16}));
  auto src = m.plan->emit(CommentText("conv_gap.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kOutputShape[] = {8, 16};")) << *src;
  EXPECT_TRUE(contains(*src, "// over dims 2-3, next to each other in memory")) << *src;
  json pooled = conv_gelu_groupnorm();
  pooled["nodes"][7] = node(7, "max_pool", {ref(6)},
                            {{"dims", 2}, {"k0", 2}, {"k1", 2}, {"s0", 2}, {"s1", 2}, {"p0", 0}, {"p1", 0},
                             {"d0", 1}, {"d1", 1}, {"ceil_mode", false}, {"return_indices", false}},
                            {8, 16, 8, 9});
  pooled["nodes"].push_back(
      node(8, "mean", {ref(7)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, {8, 16, 1, 1}));
  pooled["nodes"].push_back(node(9, "clamp", {ref(8)}, {{"min", 0.0}, {"max", 1.0}}, {8, 16, 1, 1}));
  pooled["outputs"] = {ref(9)};
  auto three = match(pooled);
  ASSERT_TRUE(three.plan_as<ConvThenPlan>()) << three.reason;
  // Then a max pooling before it and a clamp after it (KernelBench 96's shape): two steps, the clamp folded into the
  // mean's store (it was a third).
  ASSERT_EQ(plan_of(three).steps.size(), 2u);
  EXPECT_EQ(plan_of(three).steps[0].seed->route(), "pool");
  EXPECT_EQ(plan_of(three).steps[1].seed->route(), "reduce");
  EXPECT_EQ(plan_of(three).steps[1].shape, (std::vector<int64_t>{8, 16, 1, 1}));
  EXPECT_TRUE(
      plan_of(three).steps[1].seed->pattern().ends_with(", then clamp(y, max=1, min=0) (folded into its store)"))
      << plan_of(three).steps[1].seed->pattern();
  // Spatial dims and the batch, apart in memory: the rest's refusal names the op.
  json apart = conv_gelu_global_average();
  apart["nodes"][7]["params"]["dim"] = {0, 2, 3};
  apart["nodes"][7]["shape"] = {1, 16, 1, 1};
  apart["nodes"][8]["shape"] = {1, 16, 1};
  apart["nodes"][9]["shape"] = {1, 16};
  EXPECT_EQ(match(apart).reason, "after the convolution: mean over dims (0, 2, 3), which are not adjacent in memory "
                                 "(the reduction seed merges adjacent dimensions into one)");
}

// mean(gelu(conv(x)), dims (2, 3)) for an (n, c, h, w) input and k filters of 3x3: the convolution's result is the
// chain's intermediate while the output is small, so the judge's cap (8x the inputs' and output's bytes) is tight.
// `reduce` "sum" where the convolution is on the direct path and the graph should stay a chain (a mean after it is
// conv_stats's).
json conv_gelu_mean(int64_t n, int64_t c, int64_t k, int64_t h, int64_t w, const char* reduce = "mean") {
  const std::vector<int64_t> y = {n, k, h - 2, w - 2};
  return graph({input(0, "x", {n, c, h, w}), param(1, "conv_weight", 1, {k, c, 3, 3}), param(2, "conv_bias", 2, {k}),
                node(3, "conv", {ref(0), ref(1), ref(2)}, then_conv_params(static_cast<int>(c), static_cast<int>(k)), y),
                node(4, "gelu", {ref(3)}, {{"approximate", "none"}}, y),
                node(5, reduce, {ref(4)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, {n, k, 1, 1})},
               5, 1, {"conv.weight", "conv.bias"});
}

// The head's path is chosen for the whole chain: the TMA-im2col path where its packed copies fit beside the
// results and the steps' workspaces -- in chunks of fewer images where the library's own chunk would not --, the
// gather kernel (said in the kernel's text) where not one image's packed copies fit, and a refusal where not even
// the gather kernel's tables do.
TEST(ConvThen, TheConvolutionsPathIsChosenForTheWholeChainsWorkspace) {
  auto small = match(conv_gelu_mean(8, 16, 16, 18, 20));
  ASSERT_TRUE(small.plan_as<ConvThenPlan>()) << small.reason;
  EXPECT_EQ(plan_of(small).head.path, ConvPlan::Path::tma_im2col) << plan_of(small).head.path_reason;
  EXPECT_EQ(plan_of(small).head.tma_chunk_images, 0);
  // 64 images of 16 x 64 x 64 into 128 channels: y is 126 MB of the 135 MB cap; an image's packed copies are 3 MB.
  auto tight = match(conv_gelu_mean(64, 16, 128, 64, 64));
  ASSERT_TRUE(tight.plan_as<ConvThenPlan>()) << tight.reason;
  const ConvPlan& chunked = plan_of(tight).head;
  EXPECT_EQ(chunked.path, ConvPlan::Path::tma_im2col) << chunked.path_reason;
  EXPECT_GE(chunked.tma_chunk_images, 1);
  EXPECT_LT(chunked.tma_chunk_images, 64);
  auto src = tight.plan->emit(CommentText("tight.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, fmt::format("#define CIG_TMA_CHUNK_IMAGES {}  // set by the seed", chunked.tma_chunk_images)))
      << *src;
  // 8 such images: the cap leaves about 1 MB beside y.
  auto tighter = match(conv_gelu_mean(8, 16, 128, 64, 64));
  ASSERT_TRUE(tighter.plan_as<ConvThenPlan>()) << tighter.reason;
  const ConvPlan& head = plan_of(tighter).head;
  EXPECT_EQ(head.path, ConvPlan::Path::gather);
  EXPECT_TRUE(head.path_reason.starts_with("the TMA path's packed copies of one image (")) << head.path_reason;
  src = tighter.plan->emit(CommentText("tighter.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "#define CIG_TMA 0  // set by the seed: the TMA path's packed copies of one image")) << *src;
}

// Results that alone pass the cap: the chain runs in passes over the batch when every op treats each image on
// its own -- the largest divisor of the batch whose results fit, the parts planned for one pass, the call's
// shapes still the traced ones -- and is refused, saying why, when an op mixes the images.
TEST(ConvThen, ResultsOverTheCapRunInPassesOverTheBatch) {
  // 512 filters: y alone (504 MB for 64 images) passes the 135 MB cap; 16 images' (126 MB) fit.
  auto over = match(conv_gelu_mean(64, 16, 512, 64, 64));
  ASSERT_TRUE(over.plan_as<ConvThenPlan>()) << over.reason;
  const ConvThenPlan& p = plan_of(over);
  EXPECT_EQ(p.batch, 64);
  EXPECT_EQ(p.batch_chunk, 16);
  EXPECT_EQ(p.head_shape, (std::vector<int64_t>{16, 512, 62, 62}));
  EXPECT_EQ(p.input_shape, (std::vector<int64_t>{64, 16, 64, 64}));
  EXPECT_EQ(p.output_shape, (std::vector<int64_t>{64, 512, 1, 1}));
  auto src = over.plan->emit(CommentText("over.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kBatch = 64, kBatchChunk = 16;")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kShape0[] = {16, 512, 62, 62};  // y")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kInputShape[] = {64, 16, 64, 64};  // forward input 0, as traced"));
  EXPECT_TRUE(contains(*src, "    if (int rc = run_pass(pass.in, &pass.out, num_outputs, base, query, workspace_bytes, "
                             "used, stream);"))
      << *src;
  // Without passes the file is as before: one run over the traced call.
  auto small = match(conv_gelu_mean(8, 16, 16, 18, 20));
  ASSERT_TRUE(small.plan_as<ConvThenPlan>()) << small.reason;
  EXPECT_EQ(plan_of(small).batch_chunk, 0);
  auto one_pass = small.plan->emit(CommentText("small.py"));
  ASSERT_TRUE(one_pass.ok()) << one_pass.error().message;
  EXPECT_FALSE(contains(*one_pass, "run_pass"));
  // Each pass starts 16-byte aligned in x and in the output: 9 sums per image, so passes of 4 images (36
  // floats) where the batch is 8, and none where it is 6 (3, 2 or 1 images: 27, 18 or 9 floats).
  auto eight = match(conv_gelu_mean(8, 1, 9, 300, 300, "sum"));
  ASSERT_TRUE(eight.plan_as<ConvThenPlan>()) << eight.reason;
  EXPECT_EQ(plan_of(eight).batch_chunk, 4);
  auto six = match(conv_gelu_mean(6, 1, 9, 300, 300, "sum"));
  EXPECT_TRUE(contains(six.reason, "no pass of whole images whose results fit starts 16-byte aligned")) << six.reason;
  // A softmax over the batch before the mean mixes the images: no passes, and the refusal says why.
  json mixing = conv_gelu_mean(64, 16, 512, 64, 64);
  mixing["nodes"][5] = node(5, "softmax", {ref(4)}, {{"dim", 0}}, {64, 512, 62, 62});
  mixing["nodes"].push_back(
      node(6, "mean", {ref(5)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, {64, 512, 1, 1}));
  mixing["outputs"] = {ref(6)};
  auto refused = match(mixing);
  EXPECT_FALSE(refused.plan_as<ConvThenPlan>());
  EXPECT_TRUE(contains(refused.reason, "do not fit the judge's workspace cap for this problem")) << refused.reason;
  EXPECT_TRUE(contains(refused.reason, "cannot run in passes over the batch: softmax over dimension 0, the batch"))
      << refused.reason;
}

TEST(ConvThen, WhatDoesNotSplitSaysWhy) {
  // The rest reads a Python number passed to forward(): a chain passes its steps tensors.
  json scalar = conv_gelu_groupnorm();
  scalar["nodes"].push_back({{"id", 8}, {"name", "s"}, {"op", "input"}, {"index", 1}, {"scalar", true},
                             {"dtype", "float64"}});
  scalar["nodes"].push_back(node(9, "mul", {ref(7), ref(8)}, json::object(), kThenOut));
  scalar["outputs"] = {ref(9)};
  scalar["num_inputs"] = 2;
  for (int p = 1; p <= 4; ++p) scalar["nodes"][p]["index"] = p + 1;
  EXPECT_TRUE(match(scalar).reason.starts_with("the ops after the convolution read forward input s too"))
      << match(scalar).reason;
  // The rest reads two values of the head: the convolution and its gelu.
  json two_values = conv_gelu_groupnorm();
  two_values["nodes"].push_back(node(8, "add", {ref(7), ref(5)}, {{"alpha", 1}}, kThenOut));
  two_values["outputs"] = {ref(8)};
  EXPECT_TRUE(match(two_values).reason.starts_with("the ops after the convolution's pointwise epilogue read 2 of its "
                                                   "values"))
      << match(two_values).reason;
  // A rest no route seeds: the reason is the table's, after the convolution.
  json unknown = conv_gelu_groupnorm();
  unknown["nodes"][7] = node(7, "Tensor.frobnicate", {ref(6)}, json::object(), kThenOut);
  unknown["nodes"][7]["known"] = false;
  EXPECT_TRUE(match(unknown).reason.starts_with("after the convolution: ")) << match(unknown).reason;
}

TEST(SeedCompile, ConvThenSeedBuildsPassesEveryStaticCheckAndSizesItsWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution, a GroupNorm with a pointwise step in its store, minutes of nvcc");
  auto m = match(conv_gelu_groupnorm(/*scale=*/true));
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("conv_gn_scale.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_then_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[5] = {fp32(kThenIn), fp32({16, 4, 3, 3}), fp32({16}), fp32({16}), fp32({16})};
  const cutegen_tensor y = fp32(kThenOut);
  // y (147,456 bytes), then the convolution's tables and the norm's partials. The * 2 is in the norm's store, so the
  // norm writes the output: no second intermediate (there was one, the norm's result, before steps were folded).
  const size_t y_bytes = size_t{8} * 16 * 16 * 18 * 4;
  const size_t asked = workspace_bytes(in, 5, &y, 1);
  EXPECT_GT(asked, y_bytes);
  EXPECT_LT(asked, 2 * y_bytes);
  EXPECT_EQ(workspace_bytes(in, 4, &y, 1), 0u);
#endif
}

// The global average pool after a convolution (KernelBench level 2's 67): the reduce template over merged
// dimensions, writing the squeezed output, chained after the library convolution.
TEST(SeedCompile, ConvThenGlobalAveragePoolSeedBuildsAndPassesEveryStaticCheck) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution and a reduction over merged dims, a few minutes of nvcc");
  auto m = match(conv_gelu_global_average());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("conv_gap.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_gap_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  // The model's GroupNorm parameters stay contract inputs (conv_gelu_groupnorm's), unread; 16 input channels.
  const cutegen_tensor in[5] = {fp32({8, 16, 18, 20}), fp32({16, 16, 3, 3}), fp32({16}), fp32({16}), fp32({16})};
  const cutegen_tensor y = fp32({8, 16});
  // y (the convolution's result) first; the mean writes the output itself.
  EXPECT_GE(workspace_bytes(in, 5, &y, 1), size_t{8} * 16 * 16 * 18 * 4);
  const cutegen_tensor keepdim = fp32({8, 16, 1, 1});  // not the traced output shape: refused, not written wrong
  EXPECT_EQ(workspace_bytes(in, 5, &keepdim, 1), 0u);
#endif
}

// A chain whose head is on the TMA-im2col path: the library file's CUTLASS convolution at the file's scope
// beside the reduction's seed, built through the real compile stage; the chain's workspace query covers y, the
// path's packed copies (conv_tma_workspace_bytes, which the match planned with) and the step's part.
TEST(SeedCompile, ConvThenWithTheTmaPathBuildsAndAsksWhatTheMatchPlanned) {
  CUTEGEN_SLOW_COMPILE_TEST("CUTLASS's SM90 convolution in a chain, minutes of nvcc; the GPU check judges it");
  auto m = match(conv_gelu_mean(8, 16, 16, 18, 20));
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvPlan& head = plan_of(m).head;
  ASSERT_EQ(head.path, ConvPlan::Path::tma_im2col) << head.path_reason;
  auto src = m.plan->emit(CommentText("conv_mean_tma.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_FALSE(contains(*src, "#define CIG_TMA 0"));
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_mean_tma_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[3] = {fp32({8, 16, 18, 20}), fp32({16, 16, 3, 3}), fp32({16})};
  const cutegen_tensor y = fp32({8, 16, 1, 1});
  auto tma = conv_tma_workspace_bytes(head);
  ASSERT_TRUE(tma.ok()) << tma.error().message;
  const size_t asked = workspace_bytes(in, 3, &y, 1);
  EXPECT_GE(asked, static_cast<size_t>(plan_of(m).head_bytes + *tma));
  EXPECT_LE(asked, static_cast<size_t>(plan_of(m).head_bytes + conv_workspace_bound(head) + kStepScratchAllowance));
#endif
}

// A chain in passes over the batch through the real compile stage: the pass function, the loop and the parts
// planned for one pass build together, and the workspace asked for the traced call is one pass's -- its y (16
// images) and the convolution's part -- and a call of another batch is refused.
TEST(SeedCompile, ConvThenInPassesOverTheBatchBuildsAndAsksOnePassesWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution in a chain run in passes, minutes of nvcc");
  auto m = match(conv_gelu_mean(64, 16, 512, 64, 64));
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  ASSERT_EQ(plan_of(m).batch_chunk, 16);
  auto src = m.plan->emit(CommentText("conv_mean_passes.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_mean_passes_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[3] = {fp32({64, 16, 64, 64}), fp32({512, 16, 3, 3}), fp32({512})};
  const cutegen_tensor y = fp32({64, 512, 1, 1});
  const size_t asked = workspace_bytes(in, 3, &y, 1);
  const size_t one_pass_y = size_t{16} * 512 * 62 * 62 * 4;
  EXPECT_GE(asked, one_pass_y);
  EXPECT_LT(asked, 2 * one_pass_y);  // not the whole batch's 4 x
  const cutegen_tensor other_batch[3] = {fp32({32, 16, 64, 64}), fp32({512, 16, 3, 3}), fp32({512})};
  const cutegen_tensor other_y = fp32({32, 512, 1, 1});
  EXPECT_EQ(workspace_bytes(other_batch, 3, &other_y, 1), 0u);
#endif
}

// The folded steps through the real compile stage (KernelBench level 2's 85 at a small size): the norm's and the
// pooling's templates with their store epilogues -- the scale read at the element's channel, the clamp with the
// helpers the pooling's epilogue brings -- build and pass every check, and the chain asks for y and the scaled
// norm's result (no third intermediate: the clamp is written into the output by the pooling).
TEST(SeedCompile, ConvThenWithFoldedPointwiseStepsBuildsAndSizesItsWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution, a norm and a pooling with folded steps, a few minutes of nvcc");
  auto m = match(conv_groupnorm_scale_maxpool_clamp());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  ASSERT_EQ(plan_of(m).steps.size(), 2u);
  auto src = m.plan->emit(CommentText("conv_gn_scale_pool_clamp.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_folded_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[6] = {fp32(kThenIn), fp32({16, 4, 3, 3}), fp32({16}), fp32({16}), fp32({16}),
                                fp32({16, 1, 1})};
  const cutegen_tensor y = fp32({8, 16, 4, 4});
  EXPECT_GE(workspace_bytes(in, 6, &y, 1), size_t{2} * 8 * 16 * 16 * 18 * 4);
  const cutegen_tensor unpooled = fp32(kThenOut);  // not the traced output: refused, not written wrong
  EXPECT_EQ(workspace_bytes(in, 6, &unpooled, 1), 0u);
#endif
}

// A softmax over the channels with a per-channel bias after it, then a mean over the spatial dims with a tanh after
// it (KernelBench level 2's 91 and 10 in one chain): the strided softmax's and the reduction's templates with their
// store epilogues, through the real compile stage.
json conv_softmax_bias_mean_tanh() {
  json g = conv_gelu_groupnorm();
  g["nodes"][4] = param(4, "bias", 4, {16, 1, 1});
  g["nodes"][7] = node(7, "softmax", {ref(6)}, {{"dim", 1}, {"dtype", nullptr}}, kThenOut);
  g["nodes"].push_back(node(8, "add", {ref(7), ref(4)}, {{"alpha", 1}}, kThenOut));
  g["nodes"].push_back(
      node(9, "mean", {ref(8)}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}}, {8, 16, 1, 1}));
  g["nodes"].push_back(node(10, "tanh", {ref(9)}, json::object(), {8, 16, 1, 1}));
  g["outputs"] = {ref(10)};
  return g;
}

TEST(ConvThen, ASoftmaxAndAReductionTakeTheirPointwiseStepsInTheirStores) {
  auto m = match(conv_softmax_bias_mean_tanh());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  const ConvThenPlan& p = plan_of(m);
  ASSERT_EQ(p.steps.size(), 2u);  // was four: the softmax, the bias, the mean, the tanh
  EXPECT_EQ(p.steps[0].seed->route(), "row_softmax");
  EXPECT_EQ(p.steps[1].seed->route(), "reduce");
  auto src = m.plan->emit(CommentText("conv_softmax_bias_mean_tanh.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "gY(i, r, o) = store_epilogue(ep, expf(v - acc.max) * inv, "
                             "(o * kExtent + r) * kInner + i);"))
      << *src;
  EXPECT_TRUE(contains(*src, "(e / 288 % 16);  // bias\n")) << *src;
  EXPECT_TRUE(contains(*src, "    if (threadIdx.x == 0) gY(o) = store_epilogue(ep, finish(acc), o);\n")) << *src;
  EXPECT_TRUE(contains(*src, "  const float v10 = tanhf(x0);  // tanh(x0)\n")) << *src;
}

TEST(SeedCompile, ConvThenWithASoftmaxAndAReductionTakingFoldedStepsBuilds) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution, a strided softmax and a reduction with folded steps, minutes");
  auto m = match(conv_softmax_bias_mean_tanh());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("conv_softmax_bias_mean_tanh.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "conv_softmax_mean_folded_seed.cu", seed));
}
