// The reduce route's library kernel: which reductions get library/reduce_dim.cu as their seed (with
// the operation and the dimension set from the graph), which keep the reduction template and why.

#include <gtest/gtest.h>

#include "compile/source_rules.h"
#include "seed/testdata/graph_builders.h"
#include "tune/knobs.h"

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
using namespace cutegen::seed::testing;

namespace {

// torch.<op>(x, dim=dim, keepdim=keepdim) of one fp32 input (KernelBench 47, 48, 51, 52's form), `dim` as
// traced (the worker records it as written: negative counts from the end); `extra_input` adds an unused
// second forward argument.
json reduce_graph(const std::string& op, const std::vector<int64_t>& shape, int dim, bool extra_input = false,
                  bool keepdim = false) {
  const auto d = static_cast<std::ptrdiff_t>(dim < 0 ? dim + static_cast<int>(shape.size()) : dim);
  std::vector<int64_t> reduced = shape;
  if (keepdim) reduced[static_cast<std::size_t>(d)] = 1;
  else reduced.erase(reduced.begin() + d);
  json nodes = {input(0, "x", shape)};
  if (extra_input) nodes.push_back(input(1, "unused", shape));
  const int b = static_cast<int>(nodes.size());
  json params = {{"dim", dim}, {"keepdim", keepdim}};
  if (op == "sum" || op == "mean") params["dtype"] = nullptr;
  nodes.push_back(node(b, op, {ref(0)}, params, reduced, op.rfind("arg", 0) == 0 ? "int64" : "float32"));
  return graph(nodes, b, extra_input ? 2 : 1);
}

// torch.max(x, dim)[0] / torch.min(x, dim)[0]: KernelBench 49 and 53's form (a tuple, then getitem).
json extreme_values(const std::string& op, const std::vector<int64_t>& shape, int dim) {
  std::vector<int64_t> reduced = shape;
  reduced.erase(reduced.begin() + dim);
  json pair = {{"id", 1}, {"name", op + "_1"}, {"op", op}, {"args", {ref(0)}}, {"params", {{"dim", dim}, {"keepdim", false}}}};
  return graph({input(0, "x", shape), pair, node(2, "getitem", {ref(1)}, {{"index", 0}}, reduced)}, 2, 1);
}

const std::vector<int64_t> kKernelBench47 = {128, 4096, 4095};

TEST(LibraryReduceRoute, KernelBench47To53AreTheLibraryReduceDimWithTheirOperation) {
  const std::vector<std::pair<json, std::string>> cases = {
      {reduce_graph("sum", kKernelBench47, 1), "sum"},      {reduce_graph("mean", kKernelBench47, 1), "mean"},
      {extreme_values("max", kKernelBench47, 1), "max"},    {reduce_graph("argmax", kKernelBench47, 1), "argmax"},
      {reduce_graph("argmin", kKernelBench47, 1), "argmin"}, {extreme_values("min", kKernelBench47, 1), "min"},
  };
  for (const auto& [g, op] : cases) {
    SCOPED_TRACE(op);
    auto m = match(g);
    ASSERT_TRUE(m.plan_as<ReducePlan>()) << m.reason;
    EXPECT_EQ(reduce_op_name(m.plan_as<ReducePlan>()->op), op);
    EXPECT_EQ(library_reduce_refusal(*m.plan_as<ReducePlan>()), "");
    EXPECT_EQ(m.description().rfind("reduction (the library's reduce_dim) y = ", 0), 0u) << m.description();
    EXPECT_EQ(m.pattern().rfind("library reduce_dim: ", 0), 0u) << m.pattern();
    const std::string src = seed_source(g);
    EXPECT_TRUE(contains(src, "// Seed kernel for")) << src.substr(0, 2000);
    EXPECT_TRUE(contains(src, "viewed as (128, 4096, 4095) around it when traced")) << src.substr(0, 2000);
    EXPECT_TRUE(contains(src, "// Library kernel: a reduction over one dimension")) << src.substr(0, 2000);
    EXPECT_TRUE(contains(src, "constexpr ReduceOp kOp = ReduceOp::" + op + ";  // set by the seed from the graph")) << src;
    EXPECT_TRUE(contains(src, "constexpr int kDim = 1;  // set by the seed from the graph")) << src;
    EXPECT_EQ(cutegen::testing::count(src, "constexpr ReduceOp kOp"), 1);
    EXPECT_FALSE(contains(src, "constexpr int64_t kExtent")) << "the reduction template";
  }
}

TEST(LibraryReduceRoute, TheDimensionIsTheTracedInputsNonNegativeOne) {
  // dim=-1 of a 3-d input is dimension 2 (the kernel's rows path), keepdim or not.
  for (bool keepdim : {false, true}) {
    const std::string src = seed_source(reduce_graph("sum", {8, 16, 32}, -1, false, keepdim));
    EXPECT_TRUE(contains(src, "constexpr int kDim = 2;  // set by the seed from the graph")) << src.substr(0, 4000);
  }
  const std::string middle = seed_source(reduce_graph("mean", {8, 16, 32}, -2, false, true));
  EXPECT_TRUE(contains(middle, "constexpr int kDim = 1;  // set by the seed from the graph")) << middle.substr(0, 4000);
  const std::string first = seed_source(reduce_graph("argmin", {8, 16, 32}, 0));
  EXPECT_TRUE(contains(first, "constexpr int kDim = 0;  // set by the seed from the graph")) << first.substr(0, 4000);
}

TEST(LibraryReduceRoute, OtherReductionsKeepTheTemplateAndSayWhy) {
  struct Case {
    json graph;
    std::string why;
  };
  json everything = graph({input(0, "x", {64, 33}),
                           node(1, "max", {ref(0)}, json::object(), {})},
                          1, 1);
  const std::vector<Case> cases = {
      {reduce_graph("prod", {8, 16, 32}, 1), "prod: the library's reduce_dim computes sum, mean, max, min, argmax, argmin"},
      {everything, "over every element, not one dimension: the library's reduce_dim reduces one dimension"},
      {reduce_graph("sum", kKernelBench47, 1, true),
       "the reduced tensor is not the contract's only input (the library kernel reads inputs[0] alone)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    auto m = match(c.graph);
    ASSERT_TRUE(m.plan_as<ReducePlan>()) << m.reason;
    EXPECT_EQ(library_reduce_refusal(*m.plan_as<ReducePlan>()), c.why);
    EXPECT_EQ(m.description().rfind("reduction y = ", 0), 0u) << m.description();
    EXPECT_TRUE(contains(seed_source(c.graph), "constexpr int64_t kExtent")) << "the reduction template";
    EXPECT_FALSE(generate_library_reduce_kernel(*m.plan_as<ReducePlan>(), CommentText("p.py")).ok());
  }
}

TEST(LibraryReduceKernel, ALibraryWithoutTheLinesIsAnError) {
  auto m = match(reduce_graph("sum", kKernelBench47, 1));
  ASSERT_TRUE(m.plan_as<ReducePlan>()) << m.reason;
  auto missing = generate_library_reduce_kernel(*m.plan_as<ReducePlan>(), CommentText("p.py"), "// a library file that was rewritten\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error().message, "library/reduce_dim.cu does not have the line"))
      << missing.error().message;
}

// The seed keeps the library file's knobs (its measured defaults) and passes the source rules.
TEST(LibraryReduceKernel, KeepsTheLibrarysKnobsAndSourceRules) {
  const std::string src = seed_source(reduce_graph("argmax", kKernelBench47, 1));
  auto knobs = parse_knobs(src);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->describe(knobs->defaults()), "RD_COLS=256 RD_GROUPS=4 RD_UNROLL=4 RD_ROW_THREADS=256");
  EXPECT_TRUE(check_source_rules(src).empty());
}

}  // namespace
