// The norm route's library kernel: which norms get library/rmsnorm_channels.cu as their seed
// (with eps set from the graph), which keep the generic norm kernel and why.

#include <gtest/gtest.h>

#include "compile/source_rules.h"
#include "seed/testdata/graph_builders.h"
#include "tune/knobs.h"

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
using namespace cutegen::seed::testing;

namespace {

// x / sqrt(stat(x ** 2, dim, keepdim=True) + eps) of one fp32 input, KernelBench 36's form; `extra_input`
// adds an unused second forward argument.
json rms_graph(const std::vector<int64_t>& shape, int dim, double eps = 1e-5, const std::string& stat = "mean",
               bool extra_input = false) {
  std::vector<int64_t> reduced = shape;
  reduced[static_cast<std::size_t>(dim)] = 1;
  json nodes = {input(0, "x", shape)};
  if (extra_input) nodes.push_back(input(1, "unused", shape));
  const int b = static_cast<int>(nodes.size());
  nodes.push_back(node(b, "pow", {ref(0), num(2)}, json::object(), shape));
  nodes.push_back(node(b + 1, stat, {ref(b)}, {{"dim", dim}, {"keepdim", true}, {"dtype", nullptr}}, reduced));
  nodes.push_back(node(b + 2, "add", {ref(b + 1), num(eps)}, {{"alpha", 1}}, reduced));
  nodes.push_back(node(b + 3, "sqrt", {ref(b + 2)}, json::object(), reduced));
  nodes.push_back(node(b + 4, "div", {ref(0), ref(b + 3)}, {{"rounding_mode", nullptr}}, shape));
  return graph(nodes, b + 4, extra_input ? 2 : 1);
}

const std::vector<int64_t> kKernelBench36 = {112, 64, 512, 512};

TEST(LibraryRmsNormRoute, KernelBench36IsTheLibraryChannelRmsNormWithItsEps) {
  auto m = match(rms_graph(kKernelBench36, 1));
  ASSERT_TRUE(m.plan_as<NormPlan>()) << m.reason;
  EXPECT_EQ(library_rmsnorm_refusal(*m.plan_as<NormPlan>()), "");
  EXPECT_EQ(m.description(),
            "normalisation (the library's channel RMSNorm) y = div(x, sqrt(add(mean(pow(x, 2), dim=1, keepdim=True), 1e-05)))");
  EXPECT_EQ(m.pattern(), "library channel RMSNorm: div(x, sqrt(add(mean(pow(x, 2), dim=1, keepdim=True), 1e-05)))");
  const std::string src = seed_source(rms_graph(kKernelBench36, 1));
  EXPECT_TRUE(contains(src, "// Seed kernel for")) << src.substr(0, 2000);
  EXPECT_TRUE(contains(src, "viewed as (112, 64, 262144) when traced")) << src.substr(0, 2000);
  EXPECT_TRUE(contains(src, "// Library kernel: RMSNorm over dimension 1 of a contiguous fp32 tensor")) << src.substr(0, 2000);
  EXPECT_TRUE(contains(src, "constexpr float kEps = 1e-05f;  // set by the seed from the graph")) << src;
  EXPECT_EQ(cutegen::testing::count(src, "constexpr float kEps"), 1);
  EXPECT_FALSE(contains(src, "__device__ __forceinline__ float pre(float x0)")) << "the generic norm template";
}

TEST(LibraryRmsNormRoute, AnotherEpsIsWrittenIn) {
  const std::string src = seed_source(rms_graph({8, 16, 32}, 1, 1e-6));
  EXPECT_TRUE(contains(src, "constexpr float kEps = 1e-06f;  // set by the seed from the graph")) << src.substr(0, 4000);
}

TEST(LibraryRmsNormRoute, OtherNormsKeepTheGenericKernelAndSayWhy) {
  struct Case {
    json graph;
    std::string why;
  };
  const std::vector<Case> cases = {
      {rms_graph({8, 16, 32, 32}, 2), "not over dimension 1 with positions after it: the library's channel RMSNorm "
                                      "reduces (N, C, *) over C"},
      {rms_graph({4096, 64}, 1), "not over dimension 1 with positions after it: the library's channel RMSNorm reduces "
                                 "(N, C, *) over C"},
      {rms_graph({8, 128, 32}, 1), "128 channels, more than the 64 the library's channel RMSNorm keeps in registers"},
      {rms_graph({8, 16, 32}, 1, 1e-5, "sum"), "not x / sqrt(mean(x * x) + eps): the library's channel RMSNorm "
                                               "computes only that"},
      {rms_graph(kKernelBench36, 1, 1e-5, "mean", true),
       "the norm's operand is not the contract's only input (the library kernel reads inputs[0] alone)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    auto m = match(c.graph);
    ASSERT_TRUE(m.plan_as<NormPlan>()) << m.reason;
    EXPECT_EQ(library_rmsnorm_refusal(*m.plan_as<NormPlan>()), c.why);
    EXPECT_EQ(m.description().rfind("normalisation y = ", 0), 0u) << m.description();
    EXPECT_FALSE(contains(seed_source(c.graph), "// Library kernel: RMSNorm"));
    EXPECT_FALSE(generate_library_rmsnorm_kernel(*m.plan_as<NormPlan>(), CommentText("p.py")).ok());
  }
}

TEST(LibraryRmsNormKernel, ALibraryWithoutTheEpsLineIsAnError) {
  auto m = match(rms_graph(kKernelBench36, 1));
  ASSERT_TRUE(m.plan_as<NormPlan>()) << m.reason;
  auto missing = generate_library_rmsnorm_kernel(*m.plan_as<NormPlan>(), CommentText("p.py"), "// a library file that was rewritten\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error().message, "library/rmsnorm_channels.cu does not have the line"))
      << missing.error().message;
}

// The seed keeps the library file's knobs (its measured defaults) and passes the source rules. (Its build is
// the library kernel's: the attack manifest's honest entries compile and judge it.)
TEST(LibraryRmsNormKernel, KeepsTheLibrarysKnobsAndSourceRules) {
  const std::string src = seed_source(rms_graph(kKernelBench36, 1));
  auto knobs = parse_knobs(src);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->describe(knobs->defaults()), "RN_THREADS=128 RN_VEC=2");
  EXPECT_TRUE(check_source_rules(src).empty());
}

}  // namespace
