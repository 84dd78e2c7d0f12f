// The prologue_then route on hand-written trace answers shaped like the worker's: a convolution or a product
// that is not the first operator -- the parts before it, its own part and the parts after it, the refusals, the
// chained kernel's text (the library convolution at the file's scope) -- and (slow tier) a three-part seed through
// the real compile stage and its workspace query on the host.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/slow_compile_tests.h"
#include "seed/routes/prologue_then/prologue_then_route.h"
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

const std::vector<int64_t> kPrologueIn = {4, 16, 18, 20}, kProloguePooled = {4, 16, 9, 10},
                           kPrologueOut = {4, 24, 9, 10};

json prologue_pool_params(bool average) {
  // As the worker traces a pooling module: its window per dimension, a dilation of 1 for an average one too.
  json p = {{"dims", 2}, {"k0", 2}, {"k1", 2}, {"s0", 2}, {"s1", 2}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1},
            {"ceil_mode", false}};
  if (average) {
    p["count_include_pad"] = true;
    p["divisor_override"] = nullptr;
  } else {
    p["return_indices"] = false;
  }
  return p;
}

json prologue_conv_params(int in, int out) {
  return {{"dims", 2}, {"groups", 1}, {"in_channels", in}, {"out_channels", out}, {"has_bias", true},
          {"k0", 3}, {"k1", 3}, {"s0", 1}, {"s1", 1}, {"p0", 1}, {"p1", 1}, {"d0", 1}, {"d1", 1}};
}

// problems/avgpool_conv2d_hardswish.py at a smaller size: hardswish(conv(avg_pool2d(x, 2))) * 0.5.
json pool_conv_hardswish() {
  return graph({input(0, "x", kPrologueIn), param(1, "conv_weight", 1, {24, 16, 3, 3}), param(2, "conv_bias", 2, {24}),
                node(3, "avg_pool", {ref(0)}, prologue_pool_params(true), kProloguePooled),
                node(4, "conv", {ref(3), ref(1), ref(2)}, prologue_conv_params(16, 24), kPrologueOut),
                node(5, "hardswish", {ref(4)}, json::object(), kPrologueOut),
                node(6, "mul", {ref(5), num(0.5)}, json::object(), kPrologueOut)},
               6, 1, {"conv.weight", "conv.bias"});
}

// Two steps before the convolution: tanh(conv(GroupNorm(max_pool2d(x, 2)))), the norm's parameters first.
json pool_norm_conv_tanh() {
  return graph({input(0, "x", kPrologueIn), param(1, "gn_weight", 1, {16}), param(2, "gn_bias", 2, {16}),
                param(3, "conv_weight", 3, {24, 16, 3, 3}), param(4, "conv_bias", 4, {24}),
                node(5, "max_pool", {ref(0)}, prologue_pool_params(false), kProloguePooled),
                node(6, "group_norm", {ref(5), ref(1), ref(2)},
                     {{"eps", 1e-5}, {"affine", true}, {"num_groups", 4}, {"has_weight", true}, {"has_bias", true}},
                     kProloguePooled),
                node(7, "conv", {ref(6), ref(3), ref(4)}, prologue_conv_params(16, 24), kPrologueOut),
                node(8, "tanh", {ref(7)}, json::object(), kPrologueOut)},
               8, 1, {"gn.weight", "gn.bias", "conv.weight", "conv.bias"});
}

// relu(fc(gelu(x))), fc = nn.Linear(512, 2048) over 1024 rows: 128 output tiles, the library GEMM's.
json gelu_linear_relu() {
  return graph({input(0, "x", {1024, 512}), param(1, "fc_weight", 1, {2048, 512}), param(2, "fc_bias", 2, {2048}),
                node(3, "gelu", {ref(0)}, {{"approximate", "none"}}, {1024, 512}),
                node(4, "linear", {ref(3), ref(1), ref(2)}, {{"has_bias", true}}, {1024, 2048}),
                node(5, "relu", {ref(4)}, json::object(), {1024, 2048})},
               5, 1, {"fc.weight", "fc.bias"});
}

const PrologueThenPlan& prologue_plan_of(const SeedMatch& m) { return *m.plan_as<PrologueThenPlan>(); }

// The text between `namespace <ns> {` and its closing comment.
std::string prologue_namespace_text(const std::string& src, const std::string& ns) {
  const auto open = src.find(fmt::format("namespace {} {{", ns));
  const auto close = src.find(fmt::format("}}  // namespace {}", ns));
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return src.substr(open, close - open);
}

}  // namespace

TEST(PrologueThen, APoolingThenAConvolutionIsTwoSeedsThroughTheWorkspace) {
  auto m = match(pool_conv_hardswish());
  ASSERT_TRUE(m.plan_as<PrologueThenPlan>()) << m.reason;
  EXPECT_EQ(m.route(), "prologue_then");
  const PrologueThenPlan& p = prologue_plan_of(m);
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_EQ(p.parts[0].seed->route(), "pool");
  EXPECT_EQ(p.parts[0].shape, kProloguePooled);
  EXPECT_EQ(p.parts[0].bytes, 4 * 16 * 9 * 10 * 4);  // a multiple of 256 already
  EXPECT_EQ(p.parts[1].seed->route(), "conv_epilogue");  // hardswish and the scale fused into its store
  EXPECT_EQ(p.parts[1].bytes, 0);                         // the last part writes the output
  EXPECT_EQ(p.product_part, 1u);
  EXPECT_EQ(p.product_noun, "convolution");
  EXPECT_EQ(p.product_input, "avg_pool");
  EXPECT_EQ(p.num_contract_inputs, 3);
  EXPECT_EQ(p.input_shape, kPrologueIn);
  EXPECT_EQ(p.output_shape, kPrologueOut);
  // The convolution reads the pooled values where forward input 0 was: the contract's positions stay the problem's.
  const auto* conv = dynamic_cast<const TypedPlan<ConvPlan>*>(p.parts[1].seed.get());
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ((std::vector<int>{conv->plan().x_input, conv->plan().weight_input, conv->plan().bias_input}),
            (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(m.description().starts_with("pooling y = avg_pool2d(x, kernel=(2, 2)")) << m.description();
  EXPECT_TRUE(contains(m.description(), ", then convolution with a pointwise epilogue (the library's implicit-GEMM convolution, "
                                        "TMA im2col): out = mul(hardswish(y), 0.5), "
                                        "y = conv2d(y, conv_weight, conv_bias"))
      << m.description();
}

TEST(PrologueThen, TheFirstPartIsInItsNamespaceAndTheConvolutionAtTheFilesScope) {
  auto m = match(pool_conv_hardswish());
  ASSERT_TRUE(m.plan_as<PrologueThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("pool_conv.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  // The pooling's seed in seed_head, called with the problem's own inputs; no header included inside it.
  const std::string head = prologue_namespace_text(*src, "seed_head");
  ASSERT_FALSE(head.empty()) << *src;
  EXPECT_TRUE(contains(head, "static int head_forward(")) << head;
  EXPECT_EQ(head.find("#include"), std::string::npos);
  EXPECT_TRUE(contains(*src, "seed_head::head_forward(inputs, kNumInputs, &out, 1, stream)")) << *src;
  // The library convolution includes CUTLASS's headers after its code: at the file's scope, its entry points
  // static and its own, reading the pooled values as forward input 0.
  EXPECT_TRUE(includes_after_code(*conv_library_text(ConvPlan{})));
  EXPECT_EQ(src->find("namespace seed_step1 {"), std::string::npos) << "the convolution is in no namespace of its own";
  EXPECT_TRUE(contains(*src, "static int step1_forward_ws(")) << *src;
  EXPECT_TRUE(contains(*src, "static size_t step1_workspace_bytes(")) << *src;
  EXPECT_TRUE(contains(*src, "const StepInputs in1(inputs, intermediate(query ? nullptr : base + kOffset0, kShape0));"))
      << *src;
  EXPECT_TRUE(contains(*src, "::step1_forward_ws(in1.t, kNumInputs, outputs, num_outputs, base + used, part, stream)"))
      << *src;
  // The only contract entry points are the chain's.
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
  EXPECT_TRUE(contains(*src, "constexpr int64_t kShape0[] = {4, 16, 9, 10};  // y")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kInputShape[] = {4, 16, 18, 20};")) << *src;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kOutputShape[] = {4, 24, 9, 10};")) << *src;
  // The parts share one scratch region after the intermediates (they run one after another on the stream).
  EXPECT_TRUE(contains(*src, "  used += scratch;")) << *src;
  EXPECT_TRUE(contains(*src, "//   part 2: library conv_implicit_gemm (TMA im2col) + epilogue: ")) << *src;
}

TEST(PrologueThen, TwoStepsBeforeTheConvolution) {
  auto m = match(pool_norm_conv_tanh());
  ASSERT_TRUE(m.plan_as<PrologueThenPlan>()) << m.reason;
  const PrologueThenPlan& p = prologue_plan_of(m);
  ASSERT_EQ(p.parts.size(), 3u);
  EXPECT_EQ(p.parts[0].seed->route(), "pool");
  EXPECT_EQ(p.parts[1].seed->route(), "norm");
  EXPECT_EQ(p.parts[2].seed->route(), "conv_epilogue");
  EXPECT_EQ(p.product_part, 2u);
  EXPECT_EQ(p.product_input, "group_norm");
  EXPECT_EQ(p.parts[1].bytes, p.parts[0].bytes);  // the norm's result is an intermediate of the pooled shape
  const auto* conv = dynamic_cast<const TypedPlan<ConvPlan>*>(p.parts[2].seed.get());
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ((std::vector<int>{conv->plan().x_input, conv->plan().weight_input, conv->plan().bias_input,
                              conv->plan().num_contract_inputs}),
            (std::vector<int>{0, 3, 4, 5}));
  auto src = m.plan->emit(CommentText("pool_norm_conv.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "namespace seed_step1 {")) << *src;
  EXPECT_EQ(prologue_namespace_text(*src, "seed_step1").find("#include"), std::string::npos);
  EXPECT_TRUE(contains(*src, fmt::format("constexpr size_t kOffset1 = {};", p.parts[0].bytes))) << *src;
  EXPECT_TRUE(contains(*src, "const StepInputs in2(inputs, intermediate(query ? nullptr : base + kOffset1, kShape1));"))
      << *src;
  EXPECT_TRUE(contains(*src, "::step2_forward_ws(in2.t, kNumInputs, outputs")) << *src;
}

// The same machinery takes a product: the library GEMM after an activation, its NDEBUG before CUTLASS's headers.
TEST(PrologueThen, ALibraryGemmAfterAnActivation) {
  auto m = match(gelu_linear_relu());
  ASSERT_TRUE(m.plan_as<PrologueThenPlan>()) << m.reason;
  const PrologueThenPlan& p = prologue_plan_of(m);
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_EQ(p.parts[0].seed->route(), "pointwise");
  EXPECT_EQ(p.parts[1].seed->route(), "gemm_epilogue");
  EXPECT_EQ(p.product_noun, "linear");
  const auto* gemm = dynamic_cast<const TypedPlan<GemmPlan>*>(p.parts[1].seed.get());
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->plan().kernel, GemmKernel::library);
  auto src = m.plan->emit(CommentText("gelu_linear.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  const auto step = src->find("namespace seed_step1 {");
  ASSERT_NE(step, std::string::npos) << *src;
  const auto ndebug = src->find("#define NDEBUG");
  ASSERT_NE(ndebug, std::string::npos) << *src;
  EXPECT_LT(ndebug, src->find("#include <cutlass/cutlass.h>")) << "NDEBUG before CUTLASS's headers";
  // And before the pointwise head's CuTe: its asserts, compiled in there, would serialise the GEMM's wgmmas.
  EXPECT_LT(ndebug, src->find("#include <cute/tensor.hpp>")) << "NDEBUG before every header";
  EXPECT_LT(src->find("#include <cutlass/cutlass.h>"), step) << "the headers outside the step's namespace";
}

namespace {

// relu(x * 2) into a convolution whose result is added to x * 2 again: a value before the product that its part reads
// again, so the prologue ends there -- two pointwise parts, x * 2 stored -- and the convolution's epilogue reads it.
json prologue_residual(bool contiguous = true) {
  json twice = node(3, contiguous ? "mul" : "transpose", {ref(0)},
                    contiguous ? json::object() : json{{"dim0", 2}, {"dim1", 3}}, {4, 24, 10, 10});
  if (contiguous) twice["args"] = {ref(0), num(2.0)};
  twice["contiguous"] = contiguous;
  return graph({input(0, "x", {4, 24, 10, 10}), param(1, "conv_weight", 1, {24, 24, 3, 3}),
                param(2, "conv_bias", 2, {24}), twice, node(4, "relu", {ref(contiguous ? 3 : 0)}, json::object(),
                                                            {4, 24, 10, 10}),
                node(5, "conv", {ref(4), ref(1), ref(2)}, prologue_conv_params(24, 24), {4, 24, 10, 10}),
                node(6, "add", {ref(5), ref(3)}, {{"alpha", 1}}, {4, 24, 10, 10})},
               6, 1, {"conv.weight", "conv.bias"});
}

}  // namespace

TEST(PrologueThen, AValueBeforeTheProductReadAgainEndsAPrologueStep) {
  auto m = match(prologue_residual());
  ASSERT_TRUE(m.plan_as<PrologueThenPlan>()) << m.route() << ": " << m.reason;
  const PrologueThenPlan& p = prologue_plan_of(m);
  ASSERT_EQ(p.parts.size(), 3u);
  EXPECT_EQ(p.product_part, 2u);
  EXPECT_EQ(p.parts[0].stored, 3);  // x * 2, kept for the convolution's part
  ASSERT_EQ(p.parts[2].extra_reads.size(), 1u);
  EXPECT_EQ(p.parts[2].extra_reads[0].value, 0);  // chain value 0: part 1's result
  auto src = m.plan->emit(CommentText("prologue_residual.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "    // read besides the previous result: y, the first step's result\n"
                             "    const cutegen_tensor extra2[] = {intermediate(query ? nullptr : base + kOffset0, "
                             "kShape0)};\n"))
      << *src;
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
}

TEST(PrologueThen, WhatCannotBeChainedSaysWhy) {
  // The convolution's result is added to x's transpose, computed before its input and not contiguous: the chain
  // keeps contiguous fp32 values only.
  EXPECT_EQ(match(prologue_residual(/*contiguous=*/false)).reason,
            "the ops from the convolution on read a Python number or a value computed before its input (relu) that is "
            "not contiguous float32: no value splits the graph before the convolution");
  // After the convolution, an op no route seeds: the rest's reason, naming the op.
  json unknown = pool_conv_hardswish();
  unknown["nodes"][5] = node(5, "Tensor.frobnicate", {ref(4)}, json::object(), kPrologueOut);
  unknown["nodes"][5]["known"] = false;
  EXPECT_TRUE(match(unknown).reason.starts_with("the convolution of avg_pool: after the convolution: "))
      << match(unknown).reason;
  EXPECT_TRUE(contains(match(unknown).reason, "Tensor.frobnicate")) << match(unknown).reason;
  // Before it, one: the prologue's reason.
  json before = pool_conv_hardswish();
  before["nodes"][3] = node(3, "Tensor.frobnicate", {ref(0)}, json::object(), kProloguePooled);
  before["nodes"][3]["known"] = false;
  EXPECT_TRUE(match(before).reason.starts_with("before the convolution: ")) << match(before).reason;
  EXPECT_TRUE(contains(match(before).reason, "Tensor.frobnicate")) << match(before).reason;
  // Both operands of a matrix product computed: the steps before it end in one value.
  json both = graph({input(0, "a", {256, 128}), input(1, "b", {128, 64}),
                     node(2, "relu", {ref(0)}, json::object(), {256, 128}),
                     node(3, "sigmoid", {ref(1)}, json::object(), {128, 64}),
                     node(4, "matmul", {ref(2), ref(3)}, json::object(), {256, 64})},
                    4, 2);
  EXPECT_TRUE(match(both).reason.starts_with("both operands of the matrix product are computed (relu, sigmoid)"))
      << match(both).reason;
  // A product too small for the library GEMM: a chain's products are the library's.
  json small = gelu_linear_relu();
  for (int i : {0, 3}) small["nodes"][i]["shape"] = json::array({64, 512});
  small["nodes"][4]["shape"] = json::array({64, 2048});
  small["nodes"][5]["shape"] = json::array({64, 2048});
  EXPECT_TRUE(match(small).reason.starts_with("the linear of gelu: a product in a chain is not on the library GEMM"))
      << match(small).reason;
}

// The intermediates and the largest part's workspace against the judge's cap for the problem (at most 4 GiB):
// a pooled 1 GiB tensor convolved into 8 GiB, then normalised.
TEST(PrologueThen, AChainOverTheJudgesWorkspaceCapIsRefused) {
  const std::vector<int64_t> in = {64, 64, 512, 512}, pooled = {64, 64, 256, 256}, out = {64, 512, 256, 256};
  json g = graph({input(0, "x", in), param(1, "conv_weight", 1, {512, 64, 3, 3}), param(2, "conv_bias", 2, {512}),
                  node(3, "avg_pool", {ref(0)}, prologue_pool_params(true), pooled),
                  node(4, "conv", {ref(3), ref(1), ref(2)}, prologue_conv_params(64, 512), out),
                  node(5, "group_norm", {ref(4)}, {{"eps", 1e-5}, {"affine", false}, {"num_groups", 8},
                                                   {"has_weight", false}, {"has_bias", false}},
                       out)},
                 5, 1, {"conv.weight", "conv.bias"});
  auto m = match(g);
  EXPECT_FALSE(m.matched());
  EXPECT_TRUE(m.reason.starts_with("the steps' results (9663676416 bytes) and the largest part's workspace ("))
      << m.reason;
  EXPECT_TRUE(m.reason.ends_with("around the convolution do not fit the judge's workspace cap for this problem "
                                 "(4294967296 bytes)"))
      << m.reason;
}

// A chain is no step of another: the part from the convolution on (which the table would seed as one chain) is
// cut into its parts, and a second library convolution -- whose text goes at the file's scope, as the first's does
// -- is refused in words.
TEST(PrologueThen, TwoLibraryConvolutionsInOneChainAreRefused) {
  json g = pool_conv_hardswish();
  const std::vector<int64_t> second = {4, 24, 4, 5};
  g["nodes"].push_back(node(7, "avg_pool", {ref(6)}, prologue_pool_params(true), second));
  g["nodes"].push_back(param(8, "conv2_weight", 3, {8, 24, 3, 3}));
  g["nodes"].push_back(param(9, "conv2_bias", 4, {8}));
  g["nodes"].push_back(node(10, "conv", {ref(7), ref(8), ref(9)}, prologue_conv_params(24, 8), {4, 8, 4, 5}));
  g["outputs"] = {ref(10)};
  g["params"] = {"conv.weight", "conv.bias", "conv2.weight", "conv2.bias"};
  auto m = match(g);
  EXPECT_FALSE(m.matched());
  EXPECT_TRUE(m.reason.starts_with("the convolution of avg_pool: two library convolutions in one chain")) << m.reason;
}

TEST(SeedCompile, PrologueThenSeedBuildsPassesEveryStaticCheckAndSizesItsWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("a pooling, a GroupNorm and the library convolution in one file, a few minutes of nvcc");
  auto m = match(pool_norm_conv_tanh());
  ASSERT_TRUE(m.plan_as<PrologueThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("pool_norm_conv.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  BuiltSeed seed;
  ASSERT_TRUE(build_and_load(*src, "prologue_then_seed.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
  auto workspace_bytes = seed.workspace_bytes;
  const cutegen_tensor in[5] = {fp32(kPrologueIn), fp32({16}), fp32({16}), fp32({24, 16, 3, 3}), fp32({24})};
  const cutegen_tensor y = fp32(kPrologueOut);
  // The pooled values and the norm's result (23,040 bytes each), then the largest part's scratch (the
  // convolution's tap table and split weights) once.
  const size_t intermediates = size_t{2} * 23040;
  EXPECT_GT(workspace_bytes(in, 5, &y, 1), intermediates);
  const size_t parts = prologue_plan_of(m).parts.size();
  EXPECT_LE(workspace_bytes(in, 5, &y, 1), intermediates + parts * (size_t{1} << 20));
  EXPECT_EQ(workspace_bytes(in, 4, &y, 1), 0u);
  const cutegen_tensor other_batch[5] = {fp32({2, 16, 18, 20}), fp32({16}), fp32({16}), fp32({24, 16, 3, 3}),
                                         fp32({24})};
  const cutegen_tensor half = fp32({2, 24, 9, 10});
  EXPECT_EQ(workspace_bytes(other_batch, 5, &half, 1), 0u) << "the intermediates are sized for the traced call";
#endif
}

// The library GEMM as the second part, after a pointwise seed in seed_head: its prelude (NDEBUG, CUTLASS's
// headers) in front of its namespace.
TEST(SeedCompile, PrologueThenLibraryGemmAfterAnActivationBuilds) {
  CUTEGEN_SLOW_COMPILE_TEST("a pointwise seed and a CUTLASS SM90 GEMM with an epilogue in one file, minutes of nvcc");
  auto m = match(gelu_linear_relu());
  ASSERT_TRUE(m.plan_as<PrologueThenPlan>()) << m.reason;
  auto src = m.plan->emit(CommentText("gelu_linear.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  RealCompiler compiler;
  ASSERT_TRUE(compiler.build_ok(*src, "prologue_then_gemm.cu"));
}
