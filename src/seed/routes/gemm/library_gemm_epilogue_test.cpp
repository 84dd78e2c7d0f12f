// The gemm_epilogue routes on the library's 3xTF32 GEMM: which products with an epilogue get
// library/gemm_sm90_3xtf32.cu with the epilogue fused into its collective epilogue (and which keep
// the seed's tiled GEMM, and why), the seed's text, and (slow tier) its build and host planning.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/slow_compile_tests.h"
#include "compile/nvcc_compiler.h"
#include "compile/source_rules.h"
#include "seed/seed.h"
#include "seed/routes/gemm/library_gemm.h"
#include "seed/routes/gemm/library_gemm_epilogue.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/host_library.h"
#include "seed/testdata/real_compiler.h"
#include "tune/knobs.h"

#ifdef CUTEGEN_CUDA_LIB_DIR
#include <cutegen/kernel.h>
#include <dlfcn.h>
#endif

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
using namespace cutegen::seed::testing;

namespace {

json linear(int id, json args, const std::vector<int64_t>& shape) {
  const bool bias = args.size() == 3;
  return node(id, "linear", args, {{"has_bias", bias}}, shape);
}

// KernelBench 12's shape: gelu(fc(x) * 2) with fc = nn.Linear(k, n), x (m, k).
json linear_scale_gelu(int64_t m, int64_t n, int64_t k) {
  return graph({input(0, "x", {m, k}), param(1, "fc_weight", 1, {n, k}), param(2, "fc_bias", 2, {n}),
                linear(3, {ref(0), ref(1), ref(2)}, {m, n}), node(4, "mul", {ref(3), num(2.0)}, json::object(), {m, n}),
                node(5, "gelu", {ref(4)}, {{"approximate", "none"}}, {m, n})},
               5, 1, {"fc.weight", "fc.bias"});
}

// KernelBench 76's operands on a 3-d input: relu(fc(x) + bias) * scale with a bias-free fc, bias (n,) and scale
// a 0-d parameter; x (2, m / 2, k) folds into M = m. The parameters come first: B is the contract's input 3.
json linear_bias_relu_scale(int64_t m, int64_t n, int64_t k) {
  return graph({input(0, "x", {2, m / 2, k}), param(1, "bias", 1, {n}), param(2, "scale", 2, {}),
                param(3, "fc_weight", 3, {n, k}), linear(4, {ref(0), ref(3)}, {2, m / 2, n}),
                node(5, "add", {ref(4), ref(1)}, {{"alpha", 1}}, {2, m / 2, n}),
                node(6, "relu", {ref(5)}, json::object(), {2, m / 2, n}),
                node(7, "mul", {ref(6), ref(2)}, json::object(), {2, m / 2, n})},
               7, 1, {"bias", "scale", "fc.weight"});
}

// KernelBench 14/56's shape: sum(sigmoid(fc(x)), dim=1, keepdim=True) * 0.5.
json linear_sigmoid_row_sum(int64_t m, int64_t n, int64_t k) {
  return graph({input(0, "x", {m, k}), param(1, "fc_weight", 1, {n, k}), param(2, "fc_bias", 2, {n}),
                linear(3, {ref(0), ref(1), ref(2)}, {m, n}), node(4, "sigmoid", {ref(3)}, json::object(), {m, n}),
                node(5, "sum", {ref(4)}, {{"dim", 1}, {"keepdim", true}}, {m, 1}),
                node(6, "mul", {ref(5), num(0.5)}, json::object(), {m, 1})},
               6, 1, {"fc.weight", "fc.bias"});
}

// KernelBench 30's shape: hardtanh-free GroupNorm(groups) of fc(x), then relu.
json linear_groupnorm_relu(int64_t m, int64_t n, int64_t k, int64_t groups) {
  return graph({input(0, "x", {m, k}), param(1, "fc_weight", 1, {n, k}), param(2, "fc_bias", 2, {n}),
                linear(3, {ref(0), ref(1), ref(2)}, {m, n}), param(4, "gn_weight", 3, {n}),
                param(5, "gn_bias", 4, {n}),
                node(6, "group_norm", {ref(3), ref(4), ref(5)},
                     {{"eps", 1e-5}, {"affine", true}, {"num_groups", groups}, {"has_weight", true}, {"has_bias", true}},
                     {m, n}),
                node(7, "relu", {ref(6)}, json::object(), {m, n})},
               7, 1, {"fc.weight", "fc.bias", "gn.weight", "gn.bias"});
}

// A bias-free fc(x) * 2, then GELU: an epilogue without per-column operands.
json linear_nobias_scale_gelu(int64_t m, int64_t n, int64_t k) {
  return graph({input(0, "x", {m, k}), param(1, "fc_weight", 1, {n, k}), linear(2, {ref(0), ref(1)}, {m, n}),
                node(3, "mul", {ref(2), num(2.0)}, json::object(), {m, n}),
                node(4, "gelu", {ref(3)}, {{"approximate", "none"}}, {m, n})},
               4, 1, {"fc.weight"});
}

// The library seed's text for a graph, whichever kernel the choice gives it (per-column operands keep the
// tiled kernel until the library epilogue's column index is verified on a GPU; the text is still tested).
std::string library_source(const json& g) {
  auto m = match(g);
  EXPECT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
  if (!m.plan_as<GemmPlan>()) return "";
  GemmPlan p = *m.plan_as<GemmPlan>();
  p.kernel = GemmKernel::library;
  auto src = generate_library_gemm_epilogue_kernel(p, CommentText("mm.py"));
  EXPECT_TRUE(src.ok()) << src.error().message;
  return src.ok() ? *src : "";
}

}  // namespace

// The choice: the library GEMM takes a product with an epilogue -- plain, with a row reduction, with a norm --
// by the plain product's rule (at least 66 output tiles of 128 x 128) where the skinny kernel does not (here: K
// not a multiple of 4, or under 512; nn.Linear's products it takes are gemm_kernel_choice_test's); smaller ones keep
// the tiled GEMM.
TEST(LibraryGemmEpilogueChoice, LargeProductsWithAnEpilogueGetTheLibraryGemm) {
  for (const json& g : {linear_nobias_scale_gelu(1024, 8192, 8190), linear_nobias_scale_gelu(128 * 6, 128 * 11, 508)}) {
    auto m = match(g);
    ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
    const GemmPlan& p = *m.plan_as<GemmPlan>();
    EXPECT_EQ(p.kernel, GemmKernel::library) << p.kernel_reason;
    EXPECT_EQ(library_gemm_refusal(p), "");
    EXPECT_TRUE(contains(p.kernel_reason, "a product with an epilogue with ")) << p.kernel_reason;
    EXPECT_TRUE(contains(m.description(), "matrix product with an epilogue (the library's 3xTF32 GEMM) y = "))
        << m.description();
    EXPECT_TRUE(contains(m.pattern(), "library 3xTF32 GEMM: ")) << m.pattern();  // bench's seed column
  }
}

// A bias read per output column (KernelBench 12, 76, the norms' affine parameters) goes to the library GEMM
// too: its epilogue reads each element's column from the problem's identity tensor partitioned like CUTLASS's
// row broadcast (the collective's tCcD counts from the thread's first element and put a bias on the wrong
// columns on the H200).
TEST(LibraryGemmEpilogueChoice, PerColumnOperandsGetTheLibraryGemm) {
  for (const json& g : {linear_scale_gelu(1024, 8192, 8190), linear_bias_relu_scale(1024, 8192, 4094),
                        linear_sigmoid_row_sum(1024, 8192, 8190), linear_groupnorm_relu(1024, 8192, 8192, 16)}) {
    auto m = match(g);
    ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
    const GemmPlan& p = *m.plan_as<GemmPlan>();
    EXPECT_EQ(p.kernel, GemmKernel::library) << p.kernel_reason;
    EXPECT_EQ(library_gemm_refusal(p), "");
    const std::string src = library_source(g);
    EXPECT_TRUE(contains(src, "detail::sm90_partition_for_epilogue<ReferenceSrc>(\n        make_identity_tensor"))
        << "the column index must come from the absolute identity tensor";
    EXPECT_FALSE(contains(src, "args.tCcD")) << "tCcD is relative to the thread's first element";
  }
}

TEST(LibraryGemmEpilogueChoice, SmallProductsKeepTheTiledGemmAndSayWhy) {
  // 65 tiles: one short of half an H200's SMs.
  for (const json& g : {linear_scale_gelu(128 * 5, 128 * 13, 4096), linear_scale_gelu(4, 6, 8),
                        linear_sigmoid_row_sum(256, 1024, 8192), linear_groupnorm_relu(512, 512, 4096, 8)}) {
    auto m = match(g);
    ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
    const GemmPlan& p = *m.plan_as<GemmPlan>();
    EXPECT_EQ(p.kernel, GemmKernel::tiled);
    EXPECT_TRUE(contains(p.kernel_reason, "not the library GEMM: ")) << p.kernel_reason;
    EXPECT_TRUE(contains(p.kernel_reason, "output tiles of 128x128, fewer than 66")) << p.kernel_reason;
    EXPECT_FALSE(contains(m.description(), "3xTF32")) << m.description();
    const std::string src = seed_source(g);
    EXPECT_TRUE(contains(src, "// cutegen:knob GEMM_BM")) << "the seed GEMM's template";
    EXPECT_FALSE(contains(src, "gemm_sm90_3xtf32")) << src.substr(0, 1500);
  }
  // A row reduction's (M, N) buffer counts against the judge's workspace cap with the split operands.
  GemmPlan huge{.m = 65536, .n = 65536, .k = 1024, .num_contract_inputs = 3, .a_input = 0, .b_input = 1};
  huge.matrices = true;
  huge.b_transposed = true;
  huge.columns.push_back({.input = 2, .stride = 0, .name = "scale"});
  EXPECT_EQ(library_gemm_refusal(huge), "");
  huge.reduce = RowReduce::sum;
  EXPECT_TRUE(contains(library_gemm_refusal(huge), "above the judge's 4 GiB")) << library_gemm_refusal(huge);
}

// The seed: the header, then the library file with the lines the seed sets, the visitor before the library's
// namespace and the entry points after it; the library's knobs are the seed's.
TEST(LibraryGemmEpilogueKernel, TheLibraryFileWithTheEpilogueFusedAtItsStore) {
  const json g = linear_bias_relu_scale(1024, 8192, 4096);
  const std::string src = library_source(g);
  EXPECT_TRUE(contains(src, "// Seed kernel for mm.py, written by cutegen without an LLM")) << src.substr(0, 3000);
  EXPECT_TRUE(contains(src, "// a fp32 matrix product with an epilogue\n")) << src.substr(0, 3000);
  EXPECT_TRUE(contains(src, "// (M, N, K) = (1024, 8192, 4096) when traced, A's leading dimensions folded into M."))
      << src.substr(0, 3000);
  EXPECT_TRUE(contains(src, "B at the contract's positions 0 and 3")) << src.substr(0, 3000);
  EXPECT_TRUE(contains(src, "// Library kernel: C = op(A) @ op(B) for fp32 matrices at fp32 accuracy"));
  EXPECT_TRUE(contains(src, "constexpr bool kTransA = false;  // set by the seed: A is (M, K) row-major"));
  EXPECT_TRUE(contains(src, "constexpr bool kTransB = true;  // set by the seed: B is (N, K) row-major"));
  // The epilogue: its operands and statements, in the visitor the collective epilogue stores through.
  EXPECT_TRUE(contains(src, "constexpr int kInputA = 0, kInputB = 3;"));
  EXPECT_TRUE(contains(src, "constexpr int64_t kM = 1024, kN = 8192, kK = 4096;"));
  EXPECT_TRUE(contains(src, "constexpr int kColumnInput[kNumColumns + 1] = { 1, 2, -1 };"));
  EXPECT_TRUE(contains(src, "constexpr int64_t kColumnStride[kNumColumns + 1] = { 1, 0, 0 };"));
  EXPECT_TRUE(contains(src, "  const float c0 = cols.p[0][n];  // bias[n]\n"
                            "  const float c1 = cols.p[1][0];  // scale, one number\n")) << src;
  EXPECT_TRUE(contains(src, "    seed_epilogue::SeedEpilogue>::CollectiveOp;  // set by the seed"));
  EXPECT_TRUE(contains(src, "  args.epilogue.thread = fusion;  // set by the seed"));
  EXPECT_FALSE(contains(src, "args.epilogue.thread.alpha")) << "the library's linear combination is gone";
  EXPECT_LT(src.find("struct SeedEpilogue {"), src.find("namespace gemm_sm90_3xtf32 {"));
  EXPECT_LT(src.find("#include <cutlass/gemm/kernel/gemm_universal.hpp>"), src.find("struct SeedEpilogue {"));
  // The library's entry points are the seed's helpers; the seed's own are the only exported ones.
  EXPECT_TRUE(contains(src, "static size_t library_workspace_bytes("));
  EXPECT_TRUE(contains(src, "static int library_forward_ws("));
  EXPECT_EQ(src.find("extern \"C\" int cutegen_forward_ws("), src.rfind("extern \"C\" int cutegen_forward_ws("));
  EXPECT_EQ(src.find("extern \"C\" size_t cutegen_workspace_bytes("), src.rfind("extern \"C\" size_t cutegen_workspace_bytes("));
  EXPECT_GT(src.find("extern \"C\" int cutegen_forward_ws("), src.find("static int library_forward_ws("));
  EXPECT_TRUE(contains(src, "constexpr Reduce kReduce = kNone;"));
  EXPECT_TRUE(contains(src, "constexpr Norm kNorm = kNoNorm;"));
  EXPECT_FALSE(contains(src, "{{")) << src;
  EXPECT_FALSE(contains(src, "GEMM_BM")) << "the seed GEMM's template";
  auto knobs = parse_knobs(src);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->knobs.size(), 9u);
  EXPECT_TRUE(contains(knobs->describe(knobs->defaults()), "GX_TILE_M=128 GX_TILE_N=128"))
      << knobs->describe(knobs->defaults());
  // The fusion lives in CUTLASS's TMA epilogue: the library's register store (GX_STORE 1, its default) would
  // build without it, so the seed pins GX_STORE to 0 and leaves the tuner nothing else to try.
  EXPECT_TRUE(contains(src, "// cutegen:knob GX_STORE in {0}\n#ifndef GX_STORE\n#define GX_STORE 0\n")) << src;
  EXPECT_TRUE(contains(knobs->describe(knobs->defaults()), "GX_STORE=0")) << knobs->describe(knobs->defaults());
  EXPECT_TRUE(check_source_rules(src).empty());
}

TEST(LibraryGemmEpilogueKernel, ARowReductionOrANormFollowsTheGemm) {
  const std::string sum = library_source(linear_sigmoid_row_sum(1024, 8192, 8192));
  EXPECT_TRUE(contains(sum, "constexpr Reduce kReduce = kSum;"));
  EXPECT_TRUE(contains(sum, "// The sum over each row is a second kernel")) << sum.substr(0, 3000);
  EXPECT_TRUE(contains(sum, "  const float q6 = (s * 0.5f);  // mul(sum(")) << sum;
  EXPECT_TRUE(contains(sum, "constexpr size_t kValuesBytes"));
  EXPECT_FALSE(contains(sum, "{{"));
  const std::string gn = library_source(linear_groupnorm_relu(1024, 8192, 8192, 16));
  EXPECT_TRUE(contains(gn, "constexpr Norm kNorm = kGroupNorm;"));
  EXPECT_TRUE(contains(gn, "constexpr int64_t kGroups = 16;"));
  EXPECT_TRUE(contains(gn, "// The GroupNorm is a second kernel that rewrites the stored epilogue values in place"))
      << gn.substr(0, 3000);
  EXPECT_TRUE(contains(gn, "  const float c1 = cols.p[1][n];  // gn.weight[n]\n")) << gn;
  EXPECT_FALSE(contains(gn, "{{"));
}

// The seed changes the library's lines by their exact text; a library file without one of them must fail
// loudly, naming it, not emit a kernel that stores the product without its epilogue.
TEST(LibraryGemmEpilogueKernel, ALibraryWithoutALineTheSeedSetsIsAnError) {
  auto m = match(linear_scale_gelu(1024, 8192, 8192));
  ASSERT_TRUE(m.plan_as<GemmPlan>());
  std::string library = library_gemm_text();
  ASSERT_TRUE(generate_library_gemm_epilogue_kernel(*m.plan_as<GemmPlan>(), CommentText("mm.py"), library).ok());
  const std::string line = "    float, cutlass::layout::RowMajor, 4, EpilogueSchedule>::CollectiveOp;";
  const auto at = library.find(line);
  ASSERT_NE(at, std::string::npos);
  library.replace(at, line.size(), "    float, cutlass::layout::RowMajor, 4, EpilogueSchedule, Fusion>::CollectiveOp;");
  auto missing = generate_library_gemm_epilogue_kernel(*m.plan_as<GemmPlan>(), CommentText("mm.py"), library);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error().message, "does not have the line `" + line + "` exactly once"))
      << missing.error().message;
  EXPECT_TRUE(contains(missing.error().message, "src/seed/routes/gemm/library_gemm_epilogue.cpp"))
      << missing.error().message;
}

// An epilogue seed on the library GEMM through the real compile stage (source rules, nvcc, library checks, the
// CuTe check): KernelBench 76's operands on a folded 3-d input, a (N,) bias and a 0-d number. Then its host
// planning on this CPU (cutegen_workspace_bytes): the library's workspace for the traced shapes, 0 for a call
// the seed was not written for. CUTLASS's SM90 GEMM is the slowest seed to build (minutes of nvcc on two
// cores), so it is in the slow tier; the reduction and norm variants add only CuTe kernels after the GEMM that
// the tiled seed's compile test builds in the same form.
TEST(SeedCompile, LibraryGemmEpilogueSeedBuildsPassesEveryStaticCheckAndPlans) {
  CUTEGEN_SLOW_COMPILE_TEST("a CUTLASS SM90 GEMM with a fused epilogue, minutes of nvcc");
  RealCompiler compiler;
  ASSERT_TRUE(compiler.ready());
  const std::string src = library_source(linear_bias_relu_scale(1024, 8192, 4096));
  ASSERT_TRUE(contains(src, "seed_epilogue::SeedEpilogue>::CollectiveOp;"));
  auto out = compiler.compile(src, "library_gemm_epilogue.cu");
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << "\n" << out->log;
#ifndef CUTEGEN_CUDA_LIB_DIR
  GTEST_SKIP() << kNoHostCuda;
#else
  CUTEGEN_HOST_WORKSPACE_BYTES(workspace_bytes, out->library);
  // The contract's order: x, bias, scale, fc.weight.
  auto plan = [&](cutegen_tensor x, cutegen_tensor bias, cutegen_tensor scale, cutegen_tensor w, cutegen_tensor y) {
    const cutegen_tensor in[4] = {x, bias, scale, w};
    return workspace_bytes(in, 4, &y, 1);
  };
  const auto round256 = [](size_t v) { return (v + 255) / 256 * 256; };
  // A' (1024 x 3K) and B' (8192 x 3K): the library's split operands, nothing more.
  EXPECT_EQ(plan(fp32({2, 512, 4096}), fp32({8192}), fp32({}), fp32({8192, 4096}), fp32({2, 512, 8192})),
            round256(size_t{1024} * 3 * 4096 * 4) + round256(size_t{8192} * 3 * 4096 * 4));
  // Refused (0): another size, a bias of the wrong length, the operands swapped, too few inputs.
  EXPECT_EQ(plan(fp32({2, 256, 4096}), fp32({8192}), fp32({}), fp32({8192, 4096}), fp32({2, 256, 8192})), 0u);
  EXPECT_EQ(plan(fp32({2, 512, 4096}), fp32({4096}), fp32({}), fp32({8192, 4096}), fp32({2, 512, 8192})), 0u);
  EXPECT_EQ(plan(fp32({8192, 4096}), fp32({8192}), fp32({}), fp32({2, 512, 4096}), fp32({2, 512, 8192})), 0u);
  const cutegen_tensor three[3] = {fp32({2, 512, 4096}), fp32({8192}), fp32({})};
  const cutegen_tensor y = fp32({2, 512, 8192});
  EXPECT_EQ(workspace_bytes(three, 3, &y, 1), 0u);
#endif
}
