// The gemm_then route on hand-written trace answers shaped like the worker's: where the graph splits after the
// library GEMM, what each step is, the views a step reads through, the refusals, the chained kernel's text,
// and (slow tier) a seed with two library GEMMs through the real compile stage and its workspace query.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/slow_compile_tests.h"
#include "seed/graph_util.h"
#include "seed/routes/gemm_then/gemm_then_route.h"
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

// Large enough for the library GEMM: 8 x 16 = 128 output tiles of 128 x 128.
// K = 508 (not a multiple of 4): the skinny kernel refuses these products, so the heads are the library GEMM's.
constexpr int64_t kThenM = 1024, kThenK = 508, kThenN = 2048;

// torch.max(x, dim)'s (values, indices) pair: the worker gives it no tensor type.
json untyped(json n) {
  n.erase("dtype");
  n.erase("shape");
  n.erase("contiguous");
  return n;
}

json then_linear(int id, json args, const std::vector<int64_t>& shape) {
  return node(id, "linear", args, {{"has_bias", args.size() == 3}}, shape);
}

// KernelBench level 2's 99: softmax(gelu(fc(x)), dim=1), fc = nn.Linear(kThenK, kThenN); `m` rows.
json linear_gelu_softmax(int64_t m = kThenM) {
  return graph({input(0, "x", {m, kThenK}), param(1, "fc_weight", 1, {kThenN, kThenK}), param(2, "fc_bias", 2, {kThenN}),
                then_linear(3, {ref(0), ref(1), ref(2)}, {m, kThenN}),
                node(4, "gelu", {ref(3)}, {{"approximate", "none"}}, {m, kThenN}),
                node(5, "softmax", {ref(4)}, {{"dim", 1}, {"dtype", nullptr}}, {m, kThenN})},
               5, 1, {"fc.weight", "fc.bias"});
}

// KernelBench level 2's 45: logsumexp(fc2(sigmoid(fc1(x))), dim=1), fc1 (kThenK -> kThenN), fc2 (kThenN -> kThenN2).
constexpr int64_t kThenN2 = 1152;  // 8 x 9 = 72 output tiles: the library GEMM's too
json two_linears_logsumexp(int64_t k = kThenK) {
  return graph({input(0, "x", {kThenM, k}), param(1, "fc1_weight", 1, {kThenN, k}), param(2, "fc1_bias", 2, {kThenN}),
                param(3, "fc2_weight", 3, {kThenN2, kThenN}), param(4, "fc2_bias", 4, {kThenN2}),
                then_linear(5, {ref(0), ref(1), ref(2)}, {kThenM, kThenN}), node(6, "sigmoid", {ref(5)}, json::object(), {kThenM, kThenN}),
                then_linear(7, {ref(6), ref(3), ref(4)}, {kThenM, kThenN2}),
                node(8, "logsumexp", {ref(7)}, {{"dim", 1}, {"keepdim", false}}, {kThenM})},
               8, 1, {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
}

// KernelBench level 2's 98: max(gelu(avg_pool1d(fc(x).unsqueeze(1), 16).squeeze(1)) * 2, dim=1).values.
json linear_pool_gelu_max() {
  const int64_t pooled = kThenN / 16;
  return graph({input(0, "x", {kThenM, kThenK}), param(1, "fc_weight", 1, {kThenN, kThenK}), param(2, "fc_bias", 2, {kThenN}),
                then_linear(3, {ref(0), ref(1), ref(2)}, {kThenM, kThenN}),
                node(4, "unsqueeze", {ref(3)}, {{"dim", 1}}, {kThenM, 1, kThenN}),
                node(5, "avg_pool", {ref(4)},
                     {{"dims", 1}, {"k0", 16}, {"s0", 16}, {"p0", 0}, {"d0", 1}, {"ceil_mode", false},
                      {"count_include_pad", true}, {"divisor_override", nullptr}},
                     {kThenM, 1, pooled}),
                node(6, "Tensor.squeeze", {ref(5)}, json::object(), {kThenM, pooled}),
                node(7, "gelu", {ref(6)}, {{"approximate", "none"}}, {kThenM, pooled}),
                node(8, "mul", {ref(7), num(2.0)}, json::object(), {kThenM, pooled}),
                untyped(node(9, "max", {ref(8)}, {{"dim", 1}, {"keepdim", false}}, {})),
                node(10, "getitem", {ref(9)}, {{"index", 0}}, {kThenM})},
               10, 1, {"fc.weight", "fc.bias"});
}

const GemmThenPlan& gemm_then_plan_of(const SeedMatch& m) { return *m.plan_as<GemmThenPlan>(); }

}  // namespace

TEST(GemmThen, ASoftmaxAfterTheLibraryGemmsEpilogueIsASecondSeedOnItsResult) {
  auto m = match(linear_gelu_softmax());
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  EXPECT_EQ(m.route(), "gemm_then");
  const GemmThenPlan& p = gemm_then_plan_of(m);
  EXPECT_EQ(p.head.kernel, GemmKernel::library);
  EXPECT_EQ(p.head.result, p.head.epilogue.back().value);  // gelu is fused into the GEMM's store
  EXPECT_EQ(p.head_shape, (std::vector<int64_t>{kThenM, kThenN}));
  EXPECT_TRUE(p.head_read_shape.empty());
  EXPECT_EQ(p.head_bytes, kThenM * kThenN * 4);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].seed->route(), "row_softmax");
  EXPECT_EQ(p.steps[0].bytes, 0);  // the last step writes the output
  EXPECT_EQ(p.num_contract_inputs, 3);
  EXPECT_TRUE(m.description().starts_with("matrix product (the library's 3xTF32 GEMM), then row softmax y = "
                                          "softmax(y, dim=1): y = gelu(linear(x, fc_weight, fc_bias)"))
      << m.description();
}

TEST(GemmThen, TheLargestHeadTheEpilogueTakesIsTheHead) {
  // fc -> GroupNorm -> min over the row -> + bias (KernelBench 75): the norm is fused into the GEMM's seed,
  // the min and the broadcast add are the steps.
  json g = graph({input(0, "x", {kThenM, kThenK}), param(1, "fc_weight", 1, {kThenN, kThenK}), param(2, "fc_bias", 2, {kThenN}),
                  param(3, "gn_weight", 3, {kThenN}), param(4, "gn_bias", 4, {kThenN}), param(5, "bias", 5, {1, kThenN, 1, 1}),
                  then_linear(6, {ref(0), ref(1), ref(2)}, {kThenM, kThenN}),
                  node(7, "group_norm", {ref(6), ref(3), ref(4)},
                       {{"eps", 1e-5}, {"affine", true}, {"num_groups", 64}, {"has_weight", true}, {"has_bias", true}},
                       {kThenM, kThenN}),
                  untyped(node(8, "min", {ref(7)}, {{"dim", 1}, {"keepdim", true}}, {})),
                  node(9, "getitem", {ref(8)}, {{"index", 0}}, {kThenM, 1}),
                  node(10, "add", {ref(9), ref(5)}, {{"alpha", 1}}, {1, kThenN, kThenM, 1})},
                 10, 1, {"fc.weight", "fc.bias", "gn.weight", "gn.bias", "bias"});
  auto m = match(g);
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  const GemmThenPlan& p = gemm_then_plan_of(m);
  EXPECT_EQ(p.head.norm, GemmNorm::group);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].seed->route(), "reduce");
  EXPECT_EQ(p.steps[0].shape, (std::vector<int64_t>{kThenM, 1}));
  EXPECT_EQ(p.steps[1].seed->route(), "broadcast");
  EXPECT_EQ(p.output_shape, (std::vector<int64_t>{1, kThenN, kThenM, 1}));
}

TEST(GemmThen, ASecondLinearIsAStepOnTheLibraryGemmToo) {
  auto m = match(two_linears_logsumexp());
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  const GemmThenPlan& p = gemm_then_plan_of(m);
  ASSERT_EQ(p.steps.size(), 1u);
  ASSERT_EQ(p.steps[0].seed->route(), "gemm_epilogue");
  const auto* second = dynamic_cast<const TypedPlan<GemmPlan>*>(p.steps[0].seed.get());
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->plan().kernel, GemmKernel::library);
  EXPECT_EQ(second->plan().reduce, RowReduce::logsumexp);
  EXPECT_EQ(second->plan().a_input, 0);  // y, where x was
  EXPECT_EQ(second->plan().b_input, 3);  // fc2.weight

  auto src = m.plan->emit(CommentText("two_linears.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  // The head's entry points static in its namespace, the step's in its own; the only contract entry points are
  // the chain's.
  EXPECT_TRUE(contains(*src, "static int gemm_forward_ws(")) << *src;
  EXPECT_TRUE(contains(*src, "static size_t gemm_workspace_bytes(")) << *src;
  EXPECT_TRUE(contains(*src, "namespace seed_head {")) << *src;
  EXPECT_TRUE(contains(*src, "seed_head::gemm_forward_ws(inputs, kNumInputs, &out, 1, base + used, part, stream)")) << *src;
  EXPECT_TRUE(contains(*src, "namespace seed_step1 {")) << *src;
  // The headers and the `#define NDEBUG` before them stay in the file's scope, before the head's namespace.
  EXPECT_LT(src->find("#include <cutlass/cutlass.h>"), src->find("namespace seed_head {")) << *src;
  EXPECT_LT(src->find("#define NDEBUG"), src->find("#include <cutlass/cutlass.h>")) << *src;
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
  // The second GEMM's knobs are its own.
  EXPECT_TRUE(contains(*src, "#define GX_TILE_M ")) << *src;
  EXPECT_TRUE(contains(*src, "#define S1_GX_TILE_M ")) << *src;
  // The parts' workspaces share one place after the intermediates: the chain asks for the largest.
  EXPECT_TRUE(contains(*src, "  size_t scratch = 0;")) << *src;
  EXPECT_TRUE(contains(*src, "    if (part > scratch) scratch = part;\n")) << *src;
  EXPECT_TRUE(contains(*src, "  used += scratch;\n")) << *src;
  EXPECT_FALSE(contains(*src, "    used += part;\n")) << *src;
  EXPECT_FALSE(contains(*src, "{{")) << *src;
}

// x.unsqueeze(1) after the product, .squeeze(1) after the pooling: no step computes a view, each reads the
// stored values through it. The gelu and the scale after the pooling are folded into its store (KernelBench 98), so
// the pooling writes them as the squeezed view's values, which the row max reads.
// KernelBench level 2's 45 (K a multiple of 4): the first product with its sigmoid on the skinny kernel as the head,
// the second -- which the skinny kernel would take alone -- made again on the library GEMM, a chain's step.
TEST(GemmThen, ASkinnyHeadAndASecondLinearOnTheLibraryGemm) {
  auto m = match(two_linears_logsumexp(512));
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  const GemmThenPlan& p = gemm_then_plan_of(m);
  EXPECT_EQ(p.head.kernel, GemmKernel::skinny) << p.head.kernel_reason;
  ASSERT_EQ(p.steps.size(), 1u);
  const auto* second = dynamic_cast<const TypedPlan<GemmPlan>*>(p.steps[0].seed.get());
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->plan().kernel, GemmKernel::library);
  EXPECT_TRUE(contains(second->plan().kernel_reason, "a product with an epilogue with 72 output tiles")) << second->plan().kernel_reason;
  EXPECT_EQ(p.steps[0].seed->route(), "gemm_epilogue");
  auto src = m.plan->emit(CommentText("two_linears.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "skinny_gemm_kernel(")) << src->substr(0, 3000);
  // The step's knobs keep their names: the head has none of the library's to clash with.
  EXPECT_TRUE(contains(*src, "#define GX_TILE_M ")) << src->substr(0, 3000);
  EXPECT_FALSE(contains(*src, "{{"));
}

TEST(GemmThen, AViewAtACutIsHowTheNextStepReadsTheStoredValues) {
  auto m = match(linear_pool_gelu_max());
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  const GemmThenPlan& p = gemm_then_plan_of(m);
  EXPECT_EQ(p.head_shape, (std::vector<int64_t>{kThenM, kThenN}));
  EXPECT_EQ(p.head_read_shape, (std::vector<int64_t>{kThenM, 1, kThenN}));
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].seed->route(), "pool");
  EXPECT_EQ(p.steps[0].shape, (std::vector<int64_t>{kThenM, kThenN / 16}));
  EXPECT_TRUE(p.steps[0].read_shape.empty());
  EXPECT_TRUE(p.steps[0].seed->pattern().ends_with("(folded into its store)")) << p.steps[0].seed->pattern();
  EXPECT_EQ(p.steps[1].seed->route(), "reduce");

  auto src = m.plan->emit(CommentText("pool_max.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, fmt::format("constexpr int64_t kShape0[] = {{{}, {}}};  // y", kThenM, kThenN))) << *src;
  EXPECT_TRUE(contains(*src, fmt::format("constexpr int64_t kView0[] = {{{}, 1, {}}};", kThenM, kThenN))) << *src;
  EXPECT_TRUE(contains(*src, "const StepInputs in1(inputs, intermediate(query ? nullptr : base + kOffset0, kView0));"))
      << *src;
  EXPECT_TRUE(contains(*src, fmt::format("constexpr int64_t kShape1[] = {{{}, {}}};", kThenM, kThenN / 16))) << *src;
  EXPECT_FALSE(contains(*src, "kView1")) << *src;
  EXPECT_TRUE(contains(*src, "const StepInputs in2(inputs, intermediate(query ? nullptr : base + kOffset1, kShape1));"))
      << *src;
  EXPECT_FALSE(contains(*src, "in3")) << *src;
}

TEST(GemmThen, WhatDoesNotChainSaysWhy) {
  // A small product is the tiled GEMM's (gemm_then_tiled_test.cpp): when its rest does not chain, the epilogue
  // route's reason (the op it cannot fuse) stands, not the rest's.
  json small = linear_gelu_softmax(/*m=*/8);
  small["nodes"][5] = node(5, "Tensor.frobnicate", {ref(4)}, json::object(), {8, kThenN});
  small["nodes"][5]["known"] = false;
  auto s8 = match(small);
  EXPECT_FALSE(s8.matched());
  EXPECT_FALSE(contains(s8.reason, "after the matrix product")) << s8.reason;
  EXPECT_TRUE(contains(s8.reason, "Tensor.frobnicate is not a pointwise op")) << s8.reason;
  // A rest no route seeds: the reason is the table's, after the product, naming the op it stopped at.
  json unknown = linear_gelu_softmax();
  unknown["nodes"][4] = node(4, "Tensor.frobnicate", {ref(3)}, json::object(), {kThenM, kThenN});
  unknown["nodes"][4]["known"] = false;
  auto u = match(unknown);
  EXPECT_FALSE(u.matched());
  EXPECT_EQ(u.reason, "after the matrix product: softmax of a computed value (the row-softmax seed takes a forward "
                      "input)");
  // The rest reads a value computed from x before the product (not x itself, nor an identity of it): no value
  // splits the graph, so the epilogue's own reason stands, naming that value's op.
  json twice = graph({input(0, "x", {kThenM, kThenN}), param(1, "fc_weight", 1, {kThenN, kThenN}),
                      param(2, "fc_bias", 2, {kThenN}),
                      node(3, "mul", {ref(0), num(2.0)}, json::object(), {kThenM, kThenN}),
                      then_linear(4, {ref(0), ref(1), ref(2)}, {kThenM, kThenN}),
                      node(5, "gelu", {ref(4)}, {{"approximate", "none"}}, {kThenM, kThenN}),
                      node(6, "softmax", {ref(5)}, {{"dim", 1}, {"dtype", nullptr}}, {kThenM, kThenN}),
                      node(7, "add", {ref(6), ref(3)}, {{"alpha", 1}}, {kThenM, kThenN})},
                     7, 1, {"fc.weight", "fc.bias"});
  auto r = match(twice);
  EXPECT_FALSE(r.matched());
  EXPECT_FALSE(contains(r.reason, "after the matrix product")) << r.reason;
  // A second product too small for the library GEMM would be the tiled one: not chained.
  json small_second = two_linears_logsumexp();
  for (int i : {3, 4}) small_second["nodes"][i]["shape"][0] = 64;
  small_second["nodes"][7]["shape"] = json::array({kThenM, 64});
  auto s = match(small_second);
  EXPECT_FALSE(s.matched());
  EXPECT_TRUE(s.reason.starts_with("after the matrix product: a product in a chain is not on the library GEMM"))
      << s.reason;
  // The product's result alone is 4 GiB: with the GEMM's split operands it cannot fit the judge's workspace.
  auto huge = match(linear_gelu_softmax(/*m=*/int64_t{1} << 19));
  EXPECT_FALSE(huge.matched());
  EXPECT_TRUE(contains(huge.reason, "do not fit the judge's workspace cap")) << huge.reason;
}

TEST(SeedCompile, GemmThenSeedWithTwoLibraryGemmsBuildsAndSizesItsWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("two CUTLASS SM90 GEMMs with epilogues in one file, minutes of nvcc");
  auto m = match(two_linears_logsumexp());
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("two_linears.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "gemm_then_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[5] = {fp32({kThenM, kThenK}), fp32({kThenN, kThenK}), fp32({kThenN}), fp32({kThenN2, kThenN}),
                                fp32({kThenN2})};
  const cutegen_tensor y = fp32({kThenM});
  // y (kThenM x kThenN), then the larger GEMM's scratch: the second's split operands (3 (kThenM + kThenN2) kThenN
  // floats) and its (kThenM, kThenN2) values for the logsumexp -- not the sum of both GEMMs' scratch.
  const size_t second = size_t{4} * (3 * (kThenM + kThenN2) * kThenN + kThenM * kThenN2);
  const size_t first = size_t{4} * 3 * (kThenM + kThenN) * kThenK;
  EXPECT_GE(workspace_bytes(in, 5, &y, 1), size_t{4} * kThenM * kThenN + second);
  EXPECT_LT(workspace_bytes(in, 5, &y, 1), size_t{4} * kThenM * kThenN + second + first);
  EXPECT_EQ(workspace_bytes(in, 4, &y, 1), 0u);
  // Another batch than the traced one: the intermediates are sized for the trace.
  const cutegen_tensor other[5] = {fp32({kThenM / 2, kThenK}), fp32({kThenN, kThenK}), fp32({kThenN}),
                                   fp32({kThenN2, kThenN}), fp32({kThenN2})};
  const cutegen_tensor half = fp32({kThenM / 2});
  EXPECT_EQ(workspace_bytes(other, 5, &half, 1), 0u);
#endif
}

// The views between the parts (kView<i>), a pooling, a pointwise and a reduction step after the library GEMM.
TEST(SeedCompile, GemmThenSeedThroughViewsBuilds) {
  CUTEGEN_SLOW_COMPILE_TEST("a CUTLASS SM90 GEMM and three template seeds in one file, minutes of nvcc");
  auto m = match(linear_pool_gelu_max());
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("pool_max.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  RealCompiler compiler;
  auto out = compiler.build_ok(*src, "gemm_then_views.cu");
  ASSERT_TRUE(out);
}
