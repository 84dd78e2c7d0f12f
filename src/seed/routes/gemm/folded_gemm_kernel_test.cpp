// The folded GEMV (folded_gemm_kernel.h): built through the real compile stage, and its host code -- the
// workspace it asks for, the shapes it refuses -- run on this CPU machine. Whether it computes the right
// numbers is the GPU's to say: scripts/gpu_seed.py judges problems/matmul_affine_row_mean.py and
// problems/linear_sub_row_sum.py, and `cutegen bench` KernelBench level 2's 14 and 18.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/slow_compile_tests.h"
#include "seed/routes/gemm/folded_gemm_kernel.h"
#include "seed/seed.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/real_compiler.h"

using namespace cutegen;
using namespace cutegen::seed;
using namespace cutegen::seed::testing;
using json = nlohmann::json;

namespace {

// tanh(sum(fc(x) - offset, dim=-1) / 64) with fc = nn.Linear(k, n): the weight given (N, K).
json folded_linear_sub_row_sum(int64_t m, int64_t k, int64_t n) {
  return graph({input(0, "x", {m, k}), param(1, "fc_weight", 1, {n, k}), param(2, "fc_bias", 2, {n}),
                param(3, "offset", 3, {n}),
                node(4, "linear", {ref(0), ref(1), ref(2)}, {{"has_bias", true}}, {m, n}),
                node(5, "sub", {ref(4), ref(3)}, {{"alpha", 1}}, {m, n}),
                node(6, "sum", {ref(5)}, {{"dim", -1}, {"keepdim", false}, {"dtype", nullptr}}, {m}),
                node(7, "div", {ref(6), num(64)}, {{"rounding_mode", nullptr}}, {m}),
                node(8, "tanh", {ref(7)}, json::object(), {m})},
               8, 1, {"fc.weight", "fc.bias", "offset"});
}

// mean((x @ w) * scale, dim=1, keepdim=True) with w given (K, N).
json folded_matmul_scale_row_mean(int64_t m, int64_t k, int64_t n) {
  return graph({input(0, "x", {m, k}), param(1, "w", 1, {k, n}), param(2, "scale", 2, {n}),
                node(3, "matmul", {ref(0), ref(1)}, json::object(), {m, n}),
                node(4, "mul", {ref(3), ref(2)}, json::object(), {m, n}),
                node(5, "mean", {ref(4)}, {{"dim", 1}, {"keepdim", true}, {"dtype", nullptr}}, {m, 1})},
               5, 1, {"w", "scale"});
}

const GemmPlan& folded_plan_of(const SeedMatch& m) { return *m.plan_as<GemmPlan>(); }

std::string folded_seed_text(const SeedMatch& m, const char* name) {
  auto src = m.plan->emit(CommentText(name));
  EXPECT_TRUE(src.ok()) << src.error().message;
  return src.ok() ? *src : "";
}

TEST(FoldedGemm, TheWorkspaceHoldsTheCoefficientsTheVectorAndOneRowOfKPerSliceOfN) {
  // K = 4096: four CTAs of 1024 columns, so 132 (= ceil(528 / 4)) slices wanted, at most 64.
  auto wide = match(folded_linear_sub_row_sum(2048, 4096, 3000));
  ASSERT_TRUE(wide.plan_as<GemmPlan>()) << wide.reason;
  ASSERT_EQ(folded_plan_of(wide).kernel, GemmKernel::folded);
  EXPECT_EQ(folded_gemm_workspace_bytes(folded_plan_of(wide)), 8 * (2 * 3000 + 1 + 4096 + 64 * 4096));
  // K = 65536: 64 CTAs, so 9 slices.
  auto deep = match(folded_linear_sub_row_sum(8, 65536, 100));
  ASSERT_TRUE(deep.plan_as<GemmPlan>()) << deep.reason;
  EXPECT_EQ(folded_gemm_workspace_bytes(folded_plan_of(deep)), 8 * (2 * 100 + 1 + 65536 + 9 * 65536));
  // N = 3 rows cannot make more than 3 slices.
  auto narrow = match(folded_linear_sub_row_sum(8, 64, 3));
  ASSERT_TRUE(narrow.plan_as<GemmPlan>()) << narrow.reason;
  EXPECT_EQ(folded_gemm_workspace_bytes(folded_plan_of(narrow)), 8 * (2 * 3 + 1 + 64 + 3 * 64));
  // W given (K, N): one CTA per k writes w directly, no slices.
  auto rows = match(folded_matmul_scale_row_mean(300, 1001, 777));
  ASSERT_TRUE(rows.plan_as<GemmPlan>()) << rows.reason;
  ASSERT_EQ(folded_plan_of(rows).kernel, GemmKernel::folded);
  EXPECT_EQ(folded_gemm_workspace_bytes(folded_plan_of(rows)), 8 * (2 * 777 + 1 + 1001));
}

TEST(FoldedGemm, TheTextNamesTheLayoutTheReductionAndThePostOps) {
  auto m = match(folded_linear_sub_row_sum(64, 256, 48));
  ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
  const std::string src = folded_seed_text(m, "linear_sub_row_sum.py");
  EXPECT_TRUE(contains(src, "constexpr bool kBTransposed = true;")) << src;
  EXPECT_TRUE(contains(src, "constexpr bool kMean = false;")) << src;
  EXPECT_TRUE(contains(src, "constexpr int64_t kM = 64, kN = 48, kK = 256;")) << src;
  EXPECT_TRUE(contains(src, "  const double y_b = y + c0;  // + fc.bias[n]\n")) << src;
  EXPECT_TRUE(contains(src, "  const float q8 = tanhf(q7);")) << src;
  EXPECT_TRUE(contains(src, "the sum over each row of an affine function of the product")) << src;
}

// The seed through the compile stage (source rules, nvcc, the CuTe check on every kernel, both layouts' kernels
// being instantiated in every build), then its host code: the workspace it asks for is the plan's, and a call
// with another shape or too small a workspace is refused before anything is launched.
TEST(SeedCompile, FoldedGemmSeedBuildsAndItsHostCodeChecksTheCall) {
  auto m = match(folded_linear_sub_row_sum(64, 256, 48));
  ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
  BuiltSeed built;
  ASSERT_TRUE(build_and_load(folded_seed_text(m, "linear_sub_row_sum.py"), "folded.cu", built));
#ifdef CUTEGEN_CUDA_LIB_DIR
  using ForwardWs = int (*)(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t, void*, size_t, cudaStream_t);
  auto forward_ws = reinterpret_cast<ForwardWs>(dlsym(built.lib->handle, "cutegen_forward_ws"));
  ASSERT_NE(forward_ws, nullptr);
  std::vector<cutegen_tensor> in = {fp32({64, 256}), fp32({48, 256}), fp32({48}), fp32({48})};
  std::vector<cutegen_tensor> out = {fp32({64})};
  alignas(16) static float dummy[16];  // never read on the host: every refusal comes before a launch
  for (auto& t : in) t.data = dummy;
  out[0].data = dummy;
  const size_t bytes = built.workspace_bytes(in.data(), 4, out.data(), 1);
  EXPECT_EQ(static_cast<int64_t>(bytes), folded_gemm_workspace_bytes(folded_plan_of(m)));
  EXPECT_EQ(forward_ws(in.data(), 4, out.data(), 1, dummy, bytes - 8, nullptr), CUTEGEN_ERROR_BAD_ARGUMENTS);
  auto other = in;
  other[0] = fp32({32, 256});
  other[0].data = dummy;
  EXPECT_EQ(forward_ws(other.data(), 4, out.data(), 1, dummy, bytes, nullptr), CUTEGEN_ERROR_UNSUPPORTED);
  auto column = in;
  column[3] = fp32({47});
  column[3].data = dummy;
  EXPECT_EQ(forward_ws(column.data(), 4, out.data(), 1, dummy, bytes, nullptr), CUTEGEN_ERROR_UNSUPPORTED);
  EXPECT_EQ(forward_ws(in.data(), 3, out.data(), 1, dummy, bytes, nullptr), CUTEGEN_ERROR_BAD_ARGUMENTS);
#else
  GTEST_SKIP() << kNoHostCuda;
#endif
}

TEST(SeedCompile, FoldedGemmSeedOnAKByNWeightWithOddSizesBuilds) {
  CUTEGEN_SLOW_COMPILE_TEST("the folded seed on a (K, N) weight; gpu_seed.py judges matmul_affine_row_mean");
  auto m = match(folded_matmul_scale_row_mean(300, 1001, 777));
  ASSERT_TRUE(m.plan_as<GemmPlan>()) << m.reason;
  BuiltSeed built;
  ASSERT_TRUE(build_and_load(folded_seed_text(m, "matmul_affine_row_mean.py"), "folded_rows.cu", built));
#ifdef CUTEGEN_CUDA_LIB_DIR
  std::vector<cutegen_tensor> in = {fp32({300, 1001}), fp32({1001, 777}), fp32({777})};
  std::vector<cutegen_tensor> out = {fp32({300, 1})};
  EXPECT_EQ(static_cast<int64_t>(built.workspace_bytes(in.data(), 3, out.data(), 1)),
            folded_gemm_workspace_bytes(folded_plan_of(m)));
#endif
}

}  // namespace
