// The matrix-product kernel choice (gemm_kernel_choice.h): which plain products get the GEMV (gemv_kernel.cu.in) or the
// tiled GEMM with K split over CTAs, which keep the library or the tiled GEMM and why, what the generated
// sources carry, and both new seeds through the real compile stage.

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <tuple>

#include "common/fs.h"
#include "common/process.h"
#include "common/slow_compile_tests.h"
#include "compile/nvcc_compiler.h"
#include "compile/source_rules.h"
#include "seed/seed.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/real_compiler.h"
#include "tune/knobs.h"

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
using namespace cutegen::seed::testing;
namespace fs = std::filesystem;

namespace {

// The product followed by relu: an epilogue, which neither the GEMV nor split K takes.
json with_relu(json g) {
  const int out = g["outputs"][0]["ref"];
  const auto shape = g["nodes"].back()["shape"].get<std::vector<int64_t>>();
  g["nodes"].push_back(node(out + 1, "relu", {ref(out)}, json::object(), shape));
  g["outputs"] = {ref(out + 1)};
  return g;
}

std::string default_knobs(const std::string& src) {
  auto knobs = parse_knobs(src);
  EXPECT_TRUE(knobs.ok()) << knobs.error().message;
  return knobs.ok() ? knobs->describe(knobs->defaults()) : "";
}

// KernelBench 4: A (2048, 1048576) @ B (1048576, 1).
TEST(GemmKernelChoice, KernelBench4MatrixVectorProductIsTheGemv) {
  auto m = match(product(2048, 1, 1048576));
  ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
  EXPECT_EQ(m.plan_as<GemmPlan>()->kernel, GemmKernel::gemv);
  EXPECT_EQ(m.plan_as<GemmPlan>()->kernel_reason, "N = 1: each of the 2048 outputs is a row of A times the vector B");
  EXPECT_EQ(m.description(), "matrix-vector product (GEMV) y = matmul(A, B)");
  EXPECT_EQ(m.pattern(), "GEMV: matmul(A, B)");  // bench's seed column
  const std::string src = seed_source(product(2048, 1, 1048576));
  EXPECT_TRUE(contains(src, "constexpr int kMatrixInput = 0, kVectorInput = 1;")) << src.substr(0, 3000);
  EXPECT_TRUE(contains(src, "constexpr int64_t kRows = 2048, kK = 1048576;")) << src.substr(0, 3000);
  EXPECT_TRUE(contains(src, "W (A, (M, K) row-major) with the vector x (B)")) << src.substr(0, 3000);
  EXPECT_FALSE(contains(src, "{{")) << src;
  EXPECT_FALSE(contains(src, "GEMM_BM")) << "the tiled GEMM's template";
  EXPECT_EQ(default_knobs(src), "GEMV_THREADS=256 GEMV_ROWS=4 GEMV_VEC=4");
  EXPECT_TRUE(check_source_rules(src).empty());
}

// A (K,) vector on the right, and x (1, K) @ W.T with W given (N, K): the vector is then A, the matrix B.
TEST(GemmKernelChoice, AVectorOperandAndXTimesWTransposedAreGemvs) {
  auto vec = match(graph({input(0, "A", {300, 7001}), input(1, "v", {7001}),
                          node(2, "matmul", {ref(0), ref(1)}, json::object(), {300})},
                         2, 2));
  ASSERT_TRUE(vec.plan_as<GemmPlan>()) << vec.reason;
  EXPECT_EQ(vec.plan_as<GemmPlan>()->kernel, GemmKernel::gemv);
  const std::string xw = seed_source(product(1, 5000, 4096, false, true));
  EXPECT_TRUE(contains(xw, "constexpr int kMatrixInput = 1, kVectorInput = 0;")) << xw.substr(0, 3000);
  EXPECT_TRUE(contains(xw, "constexpr int64_t kRows = 5000, kK = 4096;")) << xw.substr(0, 3000);
  EXPECT_TRUE(contains(xw, "M = 1: each of the 5000 outputs is the vector A times a row of B")) << xw.substr(0, 3000);
  // The transposed B of N = 1 is the same K floats: still A's rows times a vector.
  auto tb = match(product(2048, 1, 65536, false, true));
  ASSERT_TRUE(tb.plan_as<GemmPlan>());
  EXPECT_EQ(tb.plan_as<GemmPlan>()->kernel, GemmKernel::gemv);
}

// KernelBench 6: M = N = 256, K = 524288, 4 output tiles of 128x128.
TEST(GemmKernelChoice, KernelBench6LongKIsSplitK) {
  auto m = match(product(256, 256, 524288));
  ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
  EXPECT_EQ(m.plan_as<GemmPlan>()->kernel, GemmKernel::split_k);
  EXPECT_EQ(m.plan_as<GemmPlan>()->split_k, 32);  // 16 tiles of 64x64 x 32 slices: 512 CTAs, two per SM and more
  EXPECT_EQ(m.plan_as<GemmPlan>()->kernel_reason, "4 output tiles of 128x128 (fewer than 66) and K = 524288 >= 8 x max(M, N)");
  EXPECT_EQ(m.description(), "matrix product (split K x 32) y = matmul(A, B)");
  EXPECT_EQ(m.pattern(), "split-K x32 GEMM: matmul(A, B)");
  const std::string src = seed_source(product(256, 256, 524288));
  EXPECT_TRUE(contains(src, "// cutegen:knob GEMM_SPLIT_K in {2, 4, 8, 16, 32, 64}\n#ifndef GEMM_SPLIT_K\n#define GEMM_SPLIT_K 32\n"))
      << src.substr(0, 4000);
  EXPECT_TRUE(contains(src, "constexpr int64_t kBatch = 1, kM = 256, kN = 256, kK = 524288;"));
  EXPECT_TRUE(contains(src, "// Split K, for 4 output tiles of 128x128")) << src.substr(0, 4000);
  // Contract v2: the slices live in the harness's workspace, summed by a second kernel.
  EXPECT_TRUE(contains(src, "extern \"C\" int cutegen_forward_ws("));
  EXPECT_TRUE(contains(src, "split_sum_kernel<kSlices><<<"));
  EXPECT_FALSE(contains(src, "{{")) << src;
  EXPECT_EQ(default_knobs(src), "GEMM_BM=64 GEMM_BN=64 GEMM_BK=16 GEMM_SPLIT_K=32");
  EXPECT_TRUE(check_source_rules(src).empty());
  // Transposed operands are the tiled GEMM's strides, split or not.
  auto t = match(product(256, 256, 524288, true, true));
  ASSERT_TRUE(t.plan_as<GemmPlan>());
  EXPECT_EQ(t.plan_as<GemmPlan>()->kernel, GemmKernel::split_k);
}

TEST(GemmKernelChoice, SlicesGiveTwoCtasPerSmWithinKAndTheKnob) {
  auto slices = [](int64_t m, int64_t n, int64_t k) {
    GemmPlan p{.m = m, .n = n, .k = k};
    return split_k_slices(p);
  };
  EXPECT_EQ(slices(256, 256, 524288), 32);   // 16 tiles of 64x64
  EXPECT_EQ(slices(512, 512, 8192), 8);      // 64 tiles
  EXPECT_EQ(slices(100, 60, 1 << 22), 64);   // 2 tiles: the knob's largest value
  EXPECT_EQ(slices(16, 16, 600), 2);         // K holds two slices of 256, not more
  EXPECT_EQ(slices(16, 16, 1100), 4);        // a power of two within K / 256 = 4.3
}

// Everything else keeps its route, and the tiled GEMM's plan says why each other route refused it.
TEST(GemmKernelChoice, OtherProductsDoNotTakeTheNewRoutesAndSayWhy) {
  struct Case {
    const char* what;
    json g;
    GemmKernel kernel;
    const char* reason;  // a part of kernel_reason
  };
  json bmm = graph({input(0, "A", {4, 256, 65536}), input(1, "B", {4, 65536, 256}),
                    node(2, "matmul", {ref(0), ref(1)}, json::object(), {4, 256, 256})},
                   2, 2);
  json bmv = graph({input(0, "A", {4, 512, 1024}), input(1, "B", {4, 1024, 1}),
                    node(2, "matmul", {ref(0), ref(1)}, json::object(), {4, 512, 1})},
                   2, 2);
  json triu = product(256, 256, 524288);
  triu["nodes"].push_back(node(3, "triu", {ref(2)}, {{"diagonal", 0}}, {256, 256}));
  triu["outputs"] = {ref(3)};
  for (const auto& c : {
           Case{"4096^3", product(4096, 4096, 4096), GemmKernel::library, "a plain product with 1024 output tiles"},
           Case{"N = 2, K = 4096", product(4096, 2, 4096), GemmKernel::tiled,
                "not GEMV: M = 4096 and N = 2: no vector operand"},
           Case{"N = 2, K = 4096 (split)", product(4096, 2, 4096), GemmKernel::tiled,
                "not split K: K = 4096 is under 8 x max(M, N) = 32768: splitting it would not pay"},
           Case{"KernelBench 8 (N % 4 != 0: a padded output)", product(8205, 5921, 2949), GemmKernel::library,
                "a plain product with 3055 output tiles"},
           Case{"KernelBench 6 with relu", with_relu(product(256, 256, 524288)), GemmKernel::tiled,
                "not split K: an epilogue after the product (split K's second kernel stores the sum"},
           Case{"KernelBench 4 with relu", with_relu(product(2048, 1, 1048576)), GemmKernel::tiled,
                "not GEMV: an epilogue after the product"},
           Case{"KernelBench 6 under triu", triu, GemmKernel::tiled, "not split K: the product is under triu"},
           Case{"a batched long K", bmm, GemmKernel::tiled, "not split K: a batched product"},
           Case{"a batched matrix-vector", bmv, GemmKernel::tiled, "not GEMV: a batched product"},
           Case{"A.T @ v", product(2048, 1, 4096, true), GemmKernel::tiled, "N = 1 but A is transposed"},
           Case{"x @ W, W (K, N)", product(1, 64, 256), GemmKernel::tiled, "M = 1 but B is (K, N) row-major"}}) {
    SCOPED_TRACE(c.what);
    auto m = match(c.g);
    ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
    EXPECT_EQ(m.plan_as<GemmPlan>()->kernel, c.kernel) << m.plan_as<GemmPlan>()->kernel_reason;
    EXPECT_TRUE(contains(m.plan_as<GemmPlan>()->kernel_reason, c.reason)) << m.plan_as<GemmPlan>()->kernel_reason;
    if (c.kernel != GemmKernel::tiled) continue;
    EXPECT_EQ(m.plan_as<GemmPlan>()->split_k, 1);
    EXPECT_FALSE(contains(m.pattern(), "GEMV") || contains(m.pattern(), "split")) << m.pattern();
    const std::string src = seed_source(c.g);
    EXPECT_TRUE(contains(src, "// K is not split (gemm_kernel_choice.cpp).\n#define GEMM_SPLIT_K 1\n")) << src.substr(0, 3000);
    EXPECT_FALSE(contains(src, "cutegen:knob GEMM_SPLIT_K"));
    EXPECT_FALSE(contains(src, "kMatrixInput")) << "the GEMV's template";
  }
  // A long K with N = 2 is not a GEMV: it splits K.
  auto n2 = match(product(2048, 2, 1048576));
  ASSERT_TRUE(n2.plan_as<GemmPlan>());
  EXPECT_EQ(n2.plan_as<GemmPlan>()->kernel, GemmKernel::split_k);
}

// KernelBench level 2's 68/59 shape: x (128, 16384) @ W.T with W (16384, 16384) given (N, K): the skinny kernel,
// whose seed is the tiled template's file with the product on the 3xTF32 wgmma kernel.
TEST(GemmKernelChoice, FewRowsAgainstALargeWeightTakeTheSkinnyKernel) {
  auto m = match(with_relu(product(128, 16384, 16384, false, true)));
  ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
  const GemmPlan& p = *m.plan_as<GemmPlan>();
  EXPECT_EQ(p.kernel, GemmKernel::skinny) << p.kernel_reason;
  EXPECT_TRUE(contains(p.kernel_reason, "x @ W.T, M = 128 rows against a 16384 x 16384 weight")) << p.kernel_reason;
  EXPECT_EQ(m.pattern(), "skinny 3xTF32 GEMM: relu(matmul(A, transpose(B, dim0=-2, dim1=-1)))");
  // Level 2's nn.Linear products (1024 x 8192 x 8192, 16384 x 4096 x 4096) too: the library GEMM's three split
  // copies of the weight would cost a quarter of its time.
  for (const auto& [mm, nn, kk] : {std::tuple{1024, 8192, 8192}, std::tuple{16384, 4096, 4096}}) {
    auto tall = match(with_relu(product(mm, nn, kk, false, true)));
    ASSERT_TRUE(tall.plan_as<GemmPlan>()) << tall.reason;
    EXPECT_EQ(tall.plan_as<GemmPlan>()->kernel, GemmKernel::skinny) << tall.plan_as<GemmPlan>()->kernel_reason;
  }
  // A's two split copies in the workspace, no partials without a row reduction.
  EXPECT_EQ(skinny_workspace_bytes(p), 2 * 4 * 128 * 16384);
  const std::string src = seed_source(with_relu(product(128, 16384, 16384, false, true)));
  EXPECT_FALSE(contains(src, "{{")) << src.substr(0, 3000);
  // NDEBUG before any header (an assert would serialise the wgmmas), the full CuTe header, no tiled kernel.
  EXPECT_LT(src.find("#define NDEBUG"), src.find("#include")) << src.substr(0, 3000);
  EXPECT_TRUE(contains(src, "#define SEED_SKINNY 1"));
  EXPECT_TRUE(contains(src, "#include <cute/tensor.hpp>"));
  EXPECT_TRUE(contains(src, "skinny_gemm_kernel(const float* __restrict__ w"));
  EXPECT_TRUE(contains(src, "#if !SEED_SKINNY\n// One (rows x kBK) tile"));
  EXPECT_TRUE(contains(src, "kM = 128, kN = 16384, kK = 16384;"));
  // A misaligned weight view is refused before any 16-byte copy could fault.
  EXPECT_TRUE(contains(src, "if (reinterpret_cast<uintptr_t>(w) % 16 != 0 ||")) << src.substr(0, 3000);
  EXPECT_EQ(default_knobs(src), "SK_TILE_K=32 SK_STAGES=3 SK_GROUP_M=8") << "the tiled GEMM's knobs would do nothing here";
  // The tiles arrive by TMA (a `landed` barrier per stage), never by the producer's cp.async.
  EXPECT_TRUE(contains(src, "landed[s].init(1);"));
  EXPECT_FALSE(contains(src, "cp_async")) << "the cp.async form ran at half the TMA form's speed";
  EXPECT_TRUE(contains(src, "// Knobs (docs/tuning.md): the skinny kernel's k-tile, stages and CTA groups."));
  EXPECT_TRUE(check_source_rules(src).empty());
  // The tiled plan of a near miss keeps its text: no skinny kernel, the tiled knobs.
  const std::string tiled = seed_source(with_relu(product(4096, 2, 4096)));
  EXPECT_TRUE(contains(tiled, "#define SEED_SKINNY 0"));
  EXPECT_FALSE(contains(tiled, "skinny_gemm_kernel("));
  EXPECT_FALSE(contains(tiled, "#define NDEBUG"));
  EXPECT_TRUE(contains(tiled, "// cutegen:knob GEMM_BM in {32, 64, 128}"));
  EXPECT_TRUE(contains(tiled, "// Knobs (docs/tuning.md): the CTA tile."));
}

TEST(GemmKernelChoice, TheSkinnyKernelRefusesWhatItDoesNotTakeAndSaysWhy) {
  struct Case {
    const char* what;
    json g;
    const char* reason;  // a part of skinny_refusal
  };
  json tril = product(128, 16384, 16384, false, true);
  tril["nodes"].push_back(node(4, "tril", {ref(3)}, {{"diagonal", 0}}, {128, 16384}));
  tril["outputs"] = {ref(4)};
  for (const auto& c : {
           Case{"M = 512, plain", product(512, 16384, 16384, false, true), "a plain product of M = 512 rows, above 256"},
           Case{"W given (K, N)", product(128, 16384, 16384), "not x @ W.T"},
           Case{"A transposed", product(128, 16384, 16384, true, true), "not x @ W.T"},
           Case{"K = 4098", product(128, 16384, 4098, false, true), "K = 4098: the skinny kernel wants K >= 512 and a multiple of 4"},
           Case{"K = 256", product(128, 16384, 256, false, true), "K = 256"},
           Case{"N = 4096: 32 tiles", product(128, 4096, 16384, false, true), "32 output tiles of 128x128, fewer than 66"},
           Case{"under tril", tril, "the product is under tril"}}) {
    SCOPED_TRACE(c.what);
    auto m = match(c.g);
    ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
    const GemmPlan& p = *m.plan_as<GemmPlan>();
    EXPECT_NE(p.kernel, GemmKernel::skinny);
    EXPECT_TRUE(contains(skinny_refusal(p), c.reason)) << skinny_refusal(p);
  }
}

// The skinny seed through the real compile stage (source rules, nvcc for sm_90a, the CuTe check of its kernels),
// plain and with a row reduction (its partials and the finishing kernel).
TEST(SeedCompile, SkinnySeedBuildsAndPassesEveryStaticCheck) {
  CUTEGEN_SLOW_COMPILE_TEST("the skinny 3xTF32 seed; gpu-check judges problems/linear_skinny_swish.py");
  RealCompiler compiler;
  ASSERT_TRUE(compiler.ready());
  const json plain = with_relu(product(128, 16384, 8192, false, true));
  json reduced = plain;
  reduced["nodes"].push_back(node(5, "sum", {ref(4)}, {{"dim", 1}, {"keepdim", true}}, {128, 1}));
  reduced["outputs"] = {ref(5)};
  // The reduction at the other k-tile (the 64-byte swizzle and 32 rows a split pass, six stages), and a product of
  // many row tiles (KernelBench level 2's 1024 x 8192 x 8192) ungrouped: the raster's other end.
  const json tall = with_relu(product(1024, 8192, 8192, false, true));
  for (const auto& [g, knobs] : {std::pair{plain, ""}, std::pair{reduced, "#define SK_TILE_K 16\n#define SK_STAGES 6\n"},
                                 std::pair{tall, "#define SK_GROUP_M 1\n"}}) {
    const std::string src = knobs + seed_source(g);
    ASSERT_TRUE(contains(src, "#define SEED_SKINNY 1")) << src.substr(0, 2000);
    auto out = compiler.compile(src, "skinny.cu");
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << "\n" << out->log << "\n" << src;
  }
}

// Both new seeds through the real compile stage as the judge runs it (source rules, nvcc, library checks,
// the CuTe check for every kernel: the GEMV's two instantiations, the split GEMM and its sum kernel), at
// KernelBench 4's and 6's shapes.
TEST(SeedCompile, GemvAndSplitKSeedsBuildAndPassEveryStaticCheck) {
  CUTEGEN_SLOW_COMPILE_TEST("the GEMV and split-K seeds; gpu_seed.py builds and judges matvec and matmul_long_k");
  RealCompiler compiler;
  ASSERT_TRUE(compiler.ready());
  for (const json& g : {product(2048, 1, 1048576), product(256, 256, 524288)}) {
    const std::string src = seed_source(g);
    ASSERT_TRUE(contains(src, "kMatrixInput") || contains(src, "#define GEMM_SPLIT_K 32")) << src.substr(0, 2000);
    const auto start = std::chrono::steady_clock::now();
    auto out = compiler.compile(src, "route.cu");
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << "\n" << out->log << "\n" << src;
    std::cout << "compiled in " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
              << " s\n";
  }
}

}  // namespace
