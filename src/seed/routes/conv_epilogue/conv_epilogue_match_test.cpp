// The conv_epilogue and separable_conv routes on hand-written trace answers shaped like the worker's
// (python/tests/test_op_graph.py checks the worker's side): what matches, what is refused with which reason,
// the kernel text, and (slow tier) the seeds through the real compile stage and the library's host planning.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/slow_compile_tests.h"
#include "compile/nvcc_compiler.h"
#include "seed/routes/conv/conv_route.h"
#include "seed/routes/conv_epilogue/conv_epilogue_route.h"
#include "seed/routes/separable_conv/separable_conv_route.h"
#include "seed/seed.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/host_library.h"
#include "seed/testdata/real_compiler.h"
#include "tune/knobs.h"

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
using namespace cutegen::seed::testing;

namespace {

// nn.Conv2d(in, out, 3) of (8, in, 18, 20), stride 1, no padding: (8, out, 16, 18).
json conv2d_params(int in, int out, int groups = 1, bool bias = true) {
  return {{"dims", 2}, {"groups", groups}, {"in_channels", in}, {"out_channels", out}, {"has_bias", bias},
          {"k0", 3}, {"k1", 3}, {"s0", 1}, {"s1", 1}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1}};
}
const std::vector<int64_t> kOut = {8, 16, 16, 18};

// KernelBench level 2's 1 at a small size: relu(conv(x)) + bias with bias (16, 1, 1). named_parameters()
// gives the module's own `bias` first, so the convolution's weight and bias are the contract's 2 and 3.
json conv_relu_bias(std::vector<int64_t> bias_shape = {16, 1, 1}) {
  return graph({input(0, "x", {8, 4, 18, 20}), param(1, "bias", 1, bias_shape),
                param(2, "conv_weight", 2, {16, 4, 3, 3}),
                param(3, "conv_bias", 3, {16}), node(4, "conv", {ref(0), ref(2), ref(3)}, conv2d_params(4, 16), kOut),
                node(5, "relu", {ref(4)}, json::object(), kOut),
                node(6, "add", {ref(5), ref(1)}, {{"alpha", 1}}, kOut)},
               6, 1, {"bias", "conv.weight", "conv.bias"});
}

TEST(ConvEpilogueMatcher, APerChannelVectorAndAnActivationAreTheConvolutionsEpilogue) {
  auto m = match(conv_relu_bias());
  ASSERT_TRUE(m.plan_as<ConvPlan>()) << m.reason;
  EXPECT_EQ(m.route(), "conv_epilogue");
  const ConvPlan& p = *m.plan_as<ConvPlan>();
  EXPECT_EQ((std::vector<int>{p.num_contract_inputs, p.x_input, p.weight_input, p.bias_input}),
            (std::vector<int>{4, 0, 2, 3}));
  ASSERT_EQ(p.operands.size(), 1u);
  EXPECT_EQ(p.operands[0].input, 1);
  EXPECT_EQ(p.operands[0].reads, ConvEpilogueOperand::Reads::channel);
  EXPECT_EQ(m.description(), "convolution with a pointwise epilogue (the library's implicit-GEMM convolution, direct): "
                             "out = add(relu(y), bias), y = conv2d(x, conv_weight, conv_bias, stride=(1, 1), "
                             "padding=(0, 0), dilation=(1, 1), groups=1)");
  // 4 input channels and a 3x3 window: the direct path, which the pattern names (bench's seed column).
  EXPECT_EQ(m.pattern().rfind("library conv_implicit_gemm (direct) + epilogue: add(relu(y), bias)", 0), 0u) << m.pattern();

  auto src = emit_conv(p, CommentText("conv_relu_bias.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr ConvInputs kInputs = {4, 0, 2, 3};  // set by the seed")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int kNumEpilogueOperands = 1;  // set by the seed")) << *src;
  EXPECT_TRUE(contains(*src, "kEpilogueOperands[kNumEpilogueOperands + 1] = {{1, EpilogueReads::channel}, "
                             "{-1, EpilogueReads::number}};"))
      << *src;
  EXPECT_TRUE(contains(*src, "  const float e0 = e.p[0][ch];  // bias[ch]\n"
                             "  const float v5 = (y < 0.f ? 0.f : y);  // relu(y)\n"
                             "  const float v6 = (v5 + e0);  // add(relu(y), bias)\n"
                             "  return v6;"))
      << *src;
  EXPECT_TRUE(contains(*src, "__device__ __forceinline__ float clamp_lo(float v, float lo)")) << *src;
  EXPECT_FALSE(contains(*src, "return y;  // the library's epilogue: none")) << *src;
  EXPECT_FALSE(contains(*src, "constexpr ConvInputs kInputs = {0, 0, 1, 2};")) << *src;
  auto knobs = parse_knobs(*src);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->describe(knobs->defaults()), "CIG_TILE_N=64 CIG_WGMMA=0 CIG_STAGES=3 CIG_TMA=0 CIG_TMA_TILE_M=64 CIG_TMA_TILE_N=128 CIG_TMA_PROMOTE=2 CIG_TMA_STAGES=0 CIG_TMA_MIN_CTAS=1 CIG_TMA_CLUSTER_M=1 CIG_TMA_PAIRED=0 CIG_TMA_NCHW=1 CIG_DIRECT=1 CIG_DIRECT_TILE_N=16");
}

TEST(ConvEpilogueMatcher, ThePlainConvolutionSeedKeepsTheLibrarysOwnReadingAndNoEpilogue) {
  json plain = conv_relu_bias();
  plain["nodes"] = {plain["nodes"][0], param(1, "conv_weight", 1, {16, 4, 3, 3}), param(2, "conv_bias", 2, {16}),
                    node(3, "conv", {ref(0), ref(1), ref(2)}, conv2d_params(4, 16), kOut)};
  plain["outputs"] = {ref(3)};
  plain["params"] = {"conv.weight", "conv.bias"};
  auto m = match(plain);
  ASSERT_TRUE(m.plan_as<ConvPlan>()) << m.reason;
  EXPECT_EQ(m.route(), "conv");
  EXPECT_FALSE(m.plan_as<ConvPlan>()->has_epilogue());
  auto src = emit_conv(*m.plan_as<ConvPlan>(), CommentText("plain.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr ConvInputs kInputs = {0, 0, 1, 2};\n")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int kNumEpilogueOperands = 0;\n")) << *src;
  EXPECT_TRUE(contains(*src, "  return y;  // the library's epilogue: none")) << *src;
}

// KernelBench level 2's 93 at a small size: conv_transpose, + 0.5, min with torch.tensor(0.0) (the worker's
// `constant`), gelu, * 2 -- numbers only, no operand.
TEST(ConvEpilogueMatcher, ATransposedConvolutionWithNumbersAndA0dTensorConstant) {
  json params = {{"dims", 2}, {"groups", 1}, {"in_channels", 4}, {"out_channels", 6}, {"has_bias", true},
                 {"k0", 4}, {"k1", 4}, {"s0", 2}, {"s1", 2}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1},
                 {"o0", 0}, {"o1", 0}};
  const std::vector<int64_t> s = {2, 6, 18, 22};
  json zero = {{"id", 5}, {"name", "tensor"}, {"op", "constant"}, {"params", {{"value", 0.0}}}};
  json g = graph({input(0, "x", {2, 4, 8, 10}), param(1, "up_weight", 1, {4, 6, 4, 4}), param(2, "up_bias", 2, {6}),
                  node(3, "conv_transpose", {ref(0), ref(1), ref(2)}, params, s),
                  node(4, "add", {ref(3), num(0.5)}, {{"alpha", 1}}, s), zero,
                  node(6, "minimum", {ref(4), ref(5)}, json::object(), s),
                  node(7, "gelu", {ref(6)}, {{"approximate", "none"}}, s),
                  node(8, "mul", {ref(7), num(2.0)}, json::object(), s)},
                 8, 1, {"up.weight", "up.bias"});
  auto m = match(g);
  ASSERT_TRUE(m.plan_as<ConvPlan>()) << m.reason;
  const ConvPlan& p = *m.plan_as<ConvPlan>();
  EXPECT_EQ(p.kind, ConvPlan::Kind::transposed);
  EXPECT_TRUE(p.operands.empty());
  EXPECT_EQ(p.epilogue.size(), 4u);
  auto src = emit_conv(p, CommentText("up.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr ConvInputs kInputs = {3, 0, 1, 2};")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int kNumEpilogueOperands = 0;  // set by the seed")) << *src;
  EXPECT_TRUE(contains(*src, "(y + 0.5f)") || contains(*src, "y + 0.5f")) << *src;
  EXPECT_TRUE(contains(*src, "0.f")) << *src;
}

// KernelBench level 2's 20 and 26 together: y = conv(x); r = y.clone().detach(); ((y + bias) + r) * r + r +
// x2 * sigmoid(y), with x2 a forward input of the output's shape and bias (1, 16, 1, 1).
json conv_used_several_times() {
  const auto& s = kOut;
  return graph({input(0, "x", {8, 4, 18, 20}), input(1, "x2", s), param(2, "conv_weight", 2, {16, 4, 3, 3}),
                param(3, "conv_bias", 3, {16}), node(4, "conv", {ref(0), ref(2), ref(3)}, conv2d_params(4, 16), s),
                node(5, "identity", {ref(4)}, json::object(), s), node(6, "identity", {ref(5)}, json::object(), s),
                param(7, "bias", 4, {1, 16, 1, 1}), node(8, "add", {ref(4), ref(7)}, {{"alpha", 1}}, s),
                node(9, "add", {ref(8), ref(6)}, {{"alpha", 1}}, s),
                node(10, "mul", {ref(9), ref(6)}, json::object(), s),
                node(11, "add", {ref(10), ref(6)}, {{"alpha", 1}}, s), node(12, "sigmoid", {ref(4)}, json::object(), s),
                node(13, "mul", {ref(1), ref(12)}, json::object(), s),
                node(14, "add", {ref(11), ref(13)}, {{"alpha", 1}}, s)},
               14, 2, {"conv.weight", "conv.bias", "bias"});
}

TEST(ConvEpilogueMatcher, TheOutputUsedSeveralTimesAndATensorOfItsShapeAreOneRegisterValueAndOneLoad) {
  auto m = match(conv_used_several_times());
  ASSERT_TRUE(m.plan_as<ConvPlan>()) << m.reason;
  const ConvPlan& p = *m.plan_as<ConvPlan>();
  EXPECT_EQ((std::vector<int>{p.num_contract_inputs, p.x_input, p.weight_input, p.bias_input}),
            (std::vector<int>{5, 0, 2, 3}));
  ASSERT_EQ(p.operands.size(), 2u);  // in the graph's order: x2, then bias
  EXPECT_EQ(p.operands[0].input, 1);
  EXPECT_EQ(p.operands[0].reads, ConvEpilogueOperand::Reads::element);
  EXPECT_EQ(p.operands[1].input, 4);
  EXPECT_EQ(p.operands[1].reads, ConvEpilogueOperand::Reads::channel);
  auto src = emit_conv(p, CommentText("twice.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "  const float e0 = e.p[0][at];  // x2, the output's element\n"
                             "  const float e1 = e.p[1][ch];  // bias[ch]\n"))
      << *src;
  EXPECT_TRUE(contains(*src, "{{1, EpilogueReads::element}, {4, EpilogueReads::channel}, {-1, EpilogueReads::number}}"))
      << *src;
  // The clone and the detach are identities of y: every use reads the same value.
  EXPECT_TRUE(contains(*src, "const float v5 = y;")) << *src;
}

TEST(ConvEpilogueMatcher, AOneNumberTensorIsReadOnce) {
  auto m = match(conv_relu_bias({1}));
  ASSERT_TRUE(m.plan_as<ConvPlan>()) << m.reason;
  ASSERT_EQ(m.plan_as<ConvPlan>()->operands.size(), 1u);
  EXPECT_EQ(m.plan_as<ConvPlan>()->operands[0].reads, ConvEpilogueOperand::Reads::number);
  auto src = emit_conv(*m.plan_as<ConvPlan>(), CommentText("n.py"));
  ASSERT_TRUE(src.ok());
  EXPECT_TRUE(contains(*src, "const float e0 = e.p[0][0];  // bias, one number")) << *src;
}

// conv_epilogue's own refusal (the table goes on to conv_then for a graph it refuses: conv_then_route_test.cpp).
std::string epilogue_refusal(const json& j) {
  auto g = OpGraph::from_json(j);
  if (!g) return "bad graph: " + g.error().message;
  auto plan = match_conv_epilogue(*g);
  return plan ? "" : plan.error().message;
}

TEST(ConvEpilogueMatcher, WhatTheEpilogueCannotFuseSaysWhy) {
  // A (16,) vector lines up with the output's last dimension (width 18 here: torch would not even broadcast it).
  EXPECT_EQ(match(conv_relu_bias({16})).reason,
            "parameter bias is 16, not one value per output channel (16x1x1), one number or the output's shape "
            "(8x16x16x18): the epilogue seed reads nothing else");
  EXPECT_EQ(match(conv_relu_bias({8, 16, 1, 1})).reason,
            "parameter bias is 8x16x1x1, not one value per output channel (16x1x1), one number or the output's shape "
            "(8x16x16x18): the epilogue seed reads nothing else");
  // A Python number passed to forward().
  json scalar = conv_relu_bias();
  scalar["nodes"][1] = {{"id", 1}, {"name", "s"}, {"op", "input"}, {"index", 1}, {"scalar", true},
                        {"dtype", "float64"}};
  scalar["num_inputs"] = 2;
  scalar["params"] = {"conv.weight", "conv.bias"};
  EXPECT_EQ(match(scalar).reason,
            "input s is a Python number passed to forward() (the epilogue seed reads numbers written in the module)");
  // An op that is not pointwise (a GroupNorm without affine parameters keeps the output's shape).
  json norm = conv_relu_bias();
  norm["nodes"][6] = node(6, "group_norm", {ref(5)}, {{"num_groups", 4}, {"eps", 1e-5}}, kOut);
  EXPECT_EQ(epilogue_refusal(norm), "group_norm after the convolution is not a pointwise op the seed knows (the "
                                "epilogue seed fuses pointwise ops; a norm, reduction or pooling after a convolution "
                                "has no seed yet)");
  // ... even where its affine weight, an operand the epilogue could not read either, comes first.
  json affine = conv_relu_bias();
  affine["nodes"][1] = param(1, "norm_weight", 1, {16});
  affine["nodes"][6] = node(6, "group_norm", {ref(5), ref(1)}, {{"num_groups", 4}, {"has_weight", true}}, kOut);
  EXPECT_EQ(epilogue_refusal(affine).rfind("group_norm after the convolution is not a pointwise op", 0), 0u)
      << epilogue_refusal(affine);
  // A reduction: its output has another shape, but the op is the reason.
  json mean = conv_relu_bias();
  mean["nodes"][6] = node(6, "mean", {ref(5)}, {{"dim", 1}, {"keepdim", true}, {"dtype", nullptr}}, {8, 1, 16, 18});
  EXPECT_EQ(epilogue_refusal(mean).rfind("mean after the convolution is not a pointwise op", 0), 0u)
      << epilogue_refusal(mean);
  // A prologue: the convolution of a computed value.
  json prologue = graph({input(0, "x", {8, 4, 18, 20}), param(1, "bias", 1, {16, 1, 1}),
                         param(2, "conv_weight", 2, {16, 4, 3, 3}), param(3, "conv_bias", 3, {16}),
                         node(4, "sigmoid", {ref(0)}, json::object(), {8, 4, 18, 20}),
                         node(5, "conv", {ref(4), ref(2), ref(3)}, conv2d_params(4, 16), kOut),
                         node(6, "relu", {ref(5)}, json::object(), kOut),
                         node(7, "add", {ref(6), ref(1)}, {{"alpha", 1}}, kOut)},
                        7, 1, {"bias", "conv.weight", "conv.bias"});
  EXPECT_EQ(epilogue_refusal(prologue),
            "the convolved tensor is computed (sigmoid), not a forward input (a fused prologue is future work)");
  // The table seeds it as two: the sigmoid, then this route's convolution of its result (prologue_then_route_test).
  EXPECT_EQ(match(prologue).route(), "prologue_then") << match(prologue).reason;
  // Two convolutions, the second of a relu of the first: not a separable convolution.
  json two = conv_relu_bias();
  two["nodes"][6] = node(6, "conv", {ref(5), ref(2), ref(3)}, conv2d_params(16, 16), {8, 16, 14, 16});
  two["nodes"][2]["shape"] = json::array({16, 16, 3, 3});
  two["nodes"].push_back(node(7, "tanh", {ref(6)}, json::object(), {8, 16, 14, 16}));
  two["outputs"] = {ref(7)};
  EXPECT_EQ(match(two).reason, "2 convolutions (the epilogue seed fuses one)");
  // An output of another shape than the convolution's.
  json bigger = conv_relu_bias({2, 8, 16, 16, 18});
  bigger["nodes"][6]["shape"] = json::array({2, 8, 16, 16, 18});
  EXPECT_EQ(epilogue_refusal(bigger),
            "the output is 2x8x16x16x18 float32 while the convolution is 8x16x16x18 float32: the epilogue seed "
            "computes one value per output element of the convolution");
}

// KernelBench level 1's 86 at a small size: pointwise(depthwise(x)), depthwise = nn.Conv2d(4, 4, 3, padding=1,
// groups=4, bias=False), pointwise = nn.Conv2d(4, 12, 1) with a bias.
json separable(int first_groups = 4) {
  json dw = conv2d_params(4, 4, first_groups, false);
  dw["p0"] = 1;
  dw["p1"] = 1;
  json pw = {{"dims", 2}, {"groups", 1}, {"in_channels", 4}, {"out_channels", 12}, {"has_bias", true},
             {"k0", 1}, {"k1", 1}, {"s0", 1}, {"s1", 1}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1}};
  return graph({input(0, "x", {2, 4, 10, 14}), param(1, "depthwise_weight", 1, {4, 4 / first_groups, 3, 3}),
                node(2, "conv", {ref(0), ref(1)}, dw, {2, 4, 10, 14}),
                param(3, "pointwise_weight", 2, {12, 4, 1, 1}), param(4, "pointwise_bias", 3, {12}),
                node(5, "conv", {ref(2), ref(3), ref(4)}, pw, {2, 12, 10, 14})},
               5, 1, {"depthwise.weight", "pointwise.weight", "pointwise.bias"});
}

TEST(SeparableConvMatcher, AConvolutionOfADepthwiseOneIsTwoLaunchesThroughTheWorkspace) {
  auto m = match(separable());
  ASSERT_TRUE(m.plan_as<SeparableConvPlan>()) << m.reason;
  EXPECT_EQ(m.route(), "separable_conv");
  const SeparableConvPlan& p = *m.plan_as<SeparableConvPlan>();
  EXPECT_EQ((std::vector<int>{p.depthwise.input, p.depthwise.weight_input, p.depthwise.bias_input}),
            (std::vector<int>{0, 1, -1}));
  EXPECT_EQ((std::vector<int>{p.second.weight_input, p.second.bias_input}), (std::vector<int>{2, 3}));
  EXPECT_EQ(p.intermediate_bytes, 2 * 4 * 10 * 14 * 4 + 128);  // 4480 rounded up to 256
  EXPECT_EQ(m.description(), "depthwise-separable convolution out = conv2d(y, pointwise_weight, pointwise_bias, "
                             "stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1), y = conv2d(x, "
                             "depthwise_weight, stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=4)");
  auto src = emit_separable_conv(p, CommentText("sep.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_EQ(src->rfind("// Seed kernel for sep.py", 0), 0u);
  EXPECT_TRUE(contains(*src, "static int depthwise_forward(const cutegen_tensor* inputs")) << *src;
  EXPECT_TRUE(contains(*src, "static size_t conv_workspace_bytes(")) << *src;
  EXPECT_TRUE(contains(*src, "static int conv_forward_ws(")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kShape[kRank] = { 2, 4, 10, 14 };")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int kWeight = 2, kBias = 3;")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr ConvSpec kSpec = {2, false, 1, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}};")) << *src;
  EXPECT_FALSE(contains(*src, "extern \"C\" int cutegen_forward(")) << "one entry point: the chained one";
  EXPECT_FALSE(contains(*src, "{{PROBLEM}}")) << *src;
  auto knobs = parse_knobs(*src);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->describe(knobs->defaults()), "DW_THREADS=256 CIG_TILE_N=64 CIG_WGMMA=0 CIG_STAGES=3 CIG_TMA=0 CIG_TMA_TILE_M=64 CIG_TMA_TILE_N=128 CIG_TMA_PROMOTE=2 CIG_TMA_STAGES=0 CIG_TMA_MIN_CTAS=1 CIG_TMA_CLUSTER_M=1 CIG_TMA_PAIRED=0 CIG_TMA_NCHW=1 CIG_DIRECT=1 CIG_DIRECT_TILE_N=16");
  // The first convolution dense: no seed, and the reason names the depthwise route's refusal.
  auto dense = match(separable(1));
  EXPECT_FALSE(dense.matched());
  EXPECT_EQ(dense.reason, "a convolution of a convolution whose first is not a depthwise one of an input (a dense "
                          "convolution (groups=1): only depthwise convolutions (groups = channels) have a seed)");
}

// The epilogue seed of conv_used_several_times through the real compile stage (source rules, nvcc, library
// checks, the CuTe check), then the library's host planning on this CPU with the contract's five inputs:
// the operands are checked against the output (an element tensor of another shape, a channel vector of another
// length: 0), and the workspace is the plain convolution's.
TEST(SeedCompile, ConvEpilogueSeedBuildsPassesEveryStaticCheckAndChecksItsOperands) {
  CUTEGEN_SLOW_COMPILE_TEST("the library convolution with an epilogue, a minute or two of nvcc; gpu_seed.py judges it");
  auto m = match(conv_used_several_times());
  ASSERT_TRUE(m.plan_as<ConvPlan>()) << m.reason;
  auto src = emit_conv(*m.plan_as<ConvPlan>(), CommentText("twice.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  RealCompiler compiler;
  auto out = compiler.build_ok(*src, "conv_epilogue_seed.cu");
  ASSERT_TRUE(out);
#ifndef CUTEGEN_CUDA_LIB_DIR
  GTEST_SKIP() << kNoHostCuda;
#else
  CUTEGEN_HOST_WORKSPACE_BYTES(workspace_bytes, out->library);
  const cutegen_tensor y = fp32({8, 16, 16, 18});
  auto plan = [&](cutegen_tensor x2, cutegen_tensor bias, int32_t count = 5) {
    const cutegen_tensor in[5] = {fp32({8, 4, 18, 20}), x2, fp32({16, 4, 3, 3}), fp32({16}), bias};
    return workspace_bytes(in, count, &y, 1);
  };
  // One phase; K = 9 taps x 4 channels = 36 -> kmax 64; 16 channels -> one 64-wide tile.
  const size_t table = 64 * 16, weight = size_t{64} * 64 * 4;
  EXPECT_EQ(plan(y, fp32({1, 16, 1, 1})), table + 2 * weight);
  EXPECT_EQ(plan(fp32({8, 16, 16, 17}), fp32({1, 16, 1, 1})), 0u);
  EXPECT_EQ(plan(y, fp32({1, 8, 1, 1})), 0u);
  EXPECT_EQ(plan(y, fp32({1, 16, 1, 1}), 4), 0u);  // the contract's count is part of the kernel
#endif
}

// The separable seed through the real compile stage: two kernels' source in one file, one entry point.
TEST(SeedCompile, SeparableConvSeedBuildsAndPassesEveryStaticCheck) {
  CUTEGEN_SLOW_COMPILE_TEST("the depthwise kernel and the library convolution, a minute or two of nvcc");
  auto m = match(separable());
  ASSERT_TRUE(m.plan_as<SeparableConvPlan>()) << m.reason;
  auto src = emit_separable_conv(*m.plan_as<SeparableConvPlan>(), CommentText("sep.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "separable_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[4] = {fp32({2, 4, 10, 14}), fp32({4, 1, 3, 3}), fp32({12, 4, 1, 1}), fp32({12})};
  const cutegen_tensor y = fp32({2, 12, 10, 14});
  // The intermediate (4608 bytes), then the library's table (32 rows of K x 16 bytes) and split weight
  // (2 x 32 x 64 floats).
  EXPECT_EQ(workspace_bytes(in, 4, &y, 1), size_t{4608} + 32 * 16 + 2 * 32 * 64 * 4);
  EXPECT_EQ(workspace_bytes(in, 3, &y, 1), 0u);
#endif
}

}  // namespace
