// Attention lowered before the route table (attention_lowering.h): the ops and shapes it writes, the arguments it
// refuses by name, the chain the table then makes of it (gemm_then: the library GEMM, the scale, the row softmax and
// a library GEMM reading value at its contract position), and (slow tier) that chain through the real compile stage.

#include <cmath>

#include <gtest/gtest.h>

#include "common/slow_compile_tests.h"
#include "seed/attention_lowering.h"
#include "seed/graph_util.h"
#include "seed/routes/gemm/gemm_plan.h"
#include "seed/routes/gemm_then/gemm_then_route.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/real_compiler.h"

using namespace cutegen;
using namespace cutegen::seed;
using namespace cutegen::seed::testing;

namespace {

// (batch, L = S, E = Ev): 12 x 4 x 4 tiles of 128 x 128 for the scores and 12 x 4 x 2 for the result, both enough
// for the library GEMM; the chain's intermediates and workspaces fit 8x the problem's bytes.
constexpr int64_t kAttB = 12, kAttS = 512, kAttE = 256;

json sdpa_params(json overrides = json::object()) {
  json p = {{"has_attn_mask", false}, {"dropout_p", 0.0}, {"is_causal", false}, {"scale", nullptr},
            {"enable_gqa", false}};
  p.update(overrides);
  return p;
}

// F.scaled_dot_product_attention(q, k, v, ...) as the worker traces it, then `after` (relu) of its result if asked.
json attention_graph(json overrides = json::object(), bool relu_after = false, int64_t s_kv = kAttS) {
  json nodes = {input(0, "q", {kAttB, kAttS, kAttE}), input(1, "k", {kAttB, s_kv, kAttE}), input(2, "v", {kAttB, s_kv, kAttE}),
                node(3, "scaled_dot_product_attention", {ref(0), ref(1), ref(2)}, sdpa_params(overrides),
                     {kAttB, kAttS, kAttE})};
  if (relu_after) nodes.push_back(node(4, "relu", {ref(3)}, json::object(), {kAttB, kAttS, kAttE}));
  return graph(nodes, relu_after ? 4 : 3, 3);
}

OpGraph parsed_graph(const json& j) {
  auto g = OpGraph::from_json(j);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? *g : OpGraph{};
}

TEST(AttentionLowering, WritesTheProductsTheScaleAndTheSoftmaxWithTheirShapes) {
  auto lowered = lower_attention(parsed_graph(attention_graph(json::object(), /*relu_after=*/true, /*s_kv=*/384)));
  ASSERT_TRUE(lowered.ok()) << lowered.error().message;
  ASSERT_TRUE(lowered->lowered);
  const OpGraph& g = lowered->graph;
  ASSERT_EQ(g.nodes.size(), 3u + 5u + 1u);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) EXPECT_EQ(g.nodes[i].id, static_cast<int>(i));
  const Node &t = g.node(3), &s = g.node(4), &m = g.node(5), &p = g.node(6), &o = g.node(7), &relu = g.node(8);
  EXPECT_EQ(t.op, Op::transpose);
  EXPECT_EQ(*t.args[0].ref, 1);  // key
  EXPECT_EQ(t.type->shape, (std::vector<int64_t>{kAttB, kAttE, 384}));
  EXPECT_FALSE(t.type->contiguous);
  EXPECT_EQ(s.op, Op::matmul);
  EXPECT_EQ(*s.args[0].ref, 0);
  EXPECT_EQ(*s.args[1].ref, 3);
  EXPECT_EQ(s.type->shape, (std::vector<int64_t>{kAttB, kAttS, 384}));
  EXPECT_EQ(m.op, Op::mul);
  EXPECT_EQ(*m.args[0].ref, 4);
  EXPECT_FALSE(m.args[1].is_ref());
  EXPECT_DOUBLE_EQ(m.args[1].value, 1.0 / std::sqrt(static_cast<double>(kAttE)));  // torch's default scale
  EXPECT_EQ(p.op, Op::softmax);
  EXPECT_EQ(*dim_of(p, 3), 2);
  EXPECT_EQ(p.type->shape, (std::vector<int64_t>{kAttB, kAttS, 384}));
  EXPECT_EQ(o.op, Op::matmul);
  EXPECT_EQ(*o.args[0].ref, 6);
  EXPECT_EQ(*o.args[1].ref, 2);  // value
  EXPECT_EQ(o.type->shape, (std::vector<int64_t>{kAttB, kAttS, kAttE}));
  EXPECT_EQ(*relu.args[0].ref, 7);  // a use of the attention's result reads the last product
  EXPECT_EQ(*g.outputs[0].ref, 8);
}

TEST(AttentionLowering, AGivenScaleIsTheMultiplier) {
  auto lowered = lower_attention(parsed_graph(attention_graph({{"scale", 0.3}})));
  ASSERT_TRUE(lowered.ok());
  EXPECT_DOUBLE_EQ(lowered->graph.node(5).args[1].value, 0.3);
}

TEST(AttentionLowering, AGraphWithoutAttentionIsLeftAsItIs) {
  auto lowered = lower_attention(parsed_graph(product(256, 256, 256)));
  ASSERT_TRUE(lowered.ok());
  EXPECT_FALSE(lowered->lowered);
  EXPECT_EQ(lowered->graph.nodes.size(), 3u);
}

TEST(AttentionLowering, EveryOtherArgumentIsRefusedByName) {
  const std::pair<json, const char*> cases[] = {
      {{{"has_attn_mask", true}}, "with an attn_mask"},
      {{{"dropout_p", 0.1}}, "with dropout_p=0.1"},
      {{{"is_causal", true}}, "with is_causal=True"},
      {{{"enable_gqa", true}}, "with enable_gqa=True"},
      {{{"scale", "inf"}}, "with scale="},
  };
  for (const auto& [overrides, says] : cases) {
    auto m = match(attention_graph(overrides));
    EXPECT_FALSE(m.matched()) << says;
    EXPECT_TRUE(contains(m.reason, says)) << m.reason;
    EXPECT_EQ(m.no_seed_line().find('\n'), std::string::npos);
    EXPECT_TRUE(contains(m.no_seed_line(), "scaled_dot_product_attention (")) << m.no_seed_line();
  }
  // Key and value of other rows than each other: no product lowers it.
  json j = attention_graph();
  j["nodes"][2]["shape"] = {kAttB, kAttS / 2, kAttE};
  auto m = match(j);
  EXPECT_FALSE(m.matched());
  EXPECT_TRUE(contains(m.reason, "value's rows as key's")) << m.reason;
}

TEST(AttentionLowering, TheTableChainsTheLibraryGemmTheScaleTheSoftmaxAndALibraryGemmOnValue) {
  auto m = match(attention_graph());
  ASSERT_TRUE(m.matched()) << m.reason;
  const auto* plan = m.plan_as<GemmThenPlan>();
  ASSERT_TRUE(plan) << m.route();
  EXPECT_TRUE(m.description().starts_with(kAttentionLoweredText)) << m.description();
  EXPECT_TRUE(contains(m.description(), "matrix product (the library's 3xTF32 GEMM), then")) << m.description();
  EXPECT_EQ(m.ops, "scaled_dot_product_attention");
  EXPECT_EQ(plan->head.kernel, GemmKernel::library);
  EXPECT_EQ(plan->head.batch, kAttB);
  EXPECT_TRUE(plan->head.b_transposed);
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].seed->route(), "pointwise");
  EXPECT_EQ(plan->steps[1].seed->route(), "row_softmax");
  const auto* last = dynamic_cast<const TypedPlan<GemmPlan>*>(plan->steps[2].seed.get());
  ASSERT_TRUE(last) << plan->steps[2].seed->route();
  EXPECT_EQ(last->plan().kernel, GemmKernel::library) << last->plan().kernel_reason;
  EXPECT_EQ(last->plan().a_input, 0);  // the weights, the chain's previous result
  EXPECT_EQ(last->plan().b_input, 2);  // value, where the problem has it
  auto src = m.plan->emit(CommentText("attention.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  // The step's library file reads A and B where the plan says, among the problem's three inputs.
  EXPECT_TRUE(contains(*src, "const cutegen_tensor &a = inputs[0], &b = inputs[2], &c = outputs[0];  // set by the seed"));
  EXPECT_TRUE(contains(*src, "if (num_inputs != 3 || num_outputs != 1)"));
}

TEST(AttentionLowering, TheSameOpsWrittenOutChainAlike) {
  // softmax(q @ k.transpose(-2, -1) * 0.0625, dim=-1) @ v, as a problem may write it: no lowering, the same chain.
  auto m = match(graph({input(0, "q", {kAttB, kAttS, kAttE}), input(1, "k", {kAttB, kAttS, kAttE}), input(2, "v", {kAttB, kAttS, kAttE}),
                        node(3, "transpose", {ref(1)}, {{"dim0", -2}, {"dim1", -1}}, {kAttB, kAttE, kAttS}),
                        node(4, "matmul", {ref(0), ref(3)}, json::object(), {kAttB, kAttS, kAttS}),
                        node(5, "mul", {ref(4), num(0.0625)}, json::object(), {kAttB, kAttS, kAttS}),
                        node(6, "softmax", {ref(5)}, {{"dim", -1}, {"dtype", nullptr}}, {kAttB, kAttS, kAttS}),
                        node(7, "matmul", {ref(6), ref(2)}, json::object(), {kAttB, kAttS, kAttE})},
                       7, 3));
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  EXPECT_FALSE(m.description().starts_with(kAttentionLoweredText));
}

TEST(SeedCompile, LoweredAttentionSeedBuilds) {
  CUTEGEN_SLOW_COMPILE_TEST("two CUTLASS SM90 GEMMs and two template seeds in one file, minutes of nvcc");
  auto m = match(attention_graph());
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("attention.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  RealCompiler compiler;
  auto out = compiler.build_ok(*src, "attention_seed.cu");
  ASSERT_TRUE(out);
}

}  // namespace
