// The generated kernel: its text, and one real nvcc build (sm_90a, every static check of the compile
// stage) of a chain that uses every op of the table, so each formula is known to compile as CUDA.

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/process.h"
#include "common/slow_compile_tests.h"
#include "compile/nvcc_compiler.h"
#include "seed/pointwise_ops.h"
#include "seed/testdata/graph_builders.h"
#include "seed/testdata/real_compiler.h"
#include "tune/knobs.h"

using namespace cutegen;
using namespace cutegen::seed;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

json tensor_node(int id, const std::string& name, const std::string& op, const std::string& dtype) {
  return {{"id", id}, {"name", name}, {"op", op}, {"dtype", dtype}, {"shape", {1000, 37}}, {"contiguous", true}};
}

// x, y: tensors; s: a Python float. Every op of the table once, in a chain (binary ops take y or s).
json every_op_graph(const std::string& dtype) {
  json nodes = json::array();
  nodes.push_back(tensor_node(0, "x", "input", dtype));
  nodes.back()["index"] = 0;
  nodes.push_back(tensor_node(1, "y", "input", dtype));
  nodes.back()["index"] = 1;
  nodes.push_back({{"id", 2}, {"name", "s"}, {"op", "input"}, {"index", 2}, {"scalar", true}, {"dtype", "float64"}});
  const std::map<std::string, json> params = {
      {"elu", {{"alpha", 1.0}}},
      {"celu", {{"alpha", 0.5}}},
      {"leaky_relu", {{"negative_slope", 0.01}}},
      {"softshrink", {{"lambd", 0.5}}},
      {"hardshrink", {{"lambd", 0.5}}},
      {"gelu", {{"approximate", "tanh"}}},
      {"softplus", {{"beta", 2.0}, {"threshold", 20.0}}},
      {"hardtanh", {{"min_val", -1.0}, {"max_val", 1.0}}},
      {"clamp", {{"min", -2.0}, {"max", nullptr}}},
      {"clamp_min", {{"min", -3.0}}},
      {"clamp_max", {{"max", 3.0}}},
      {"threshold", {{"threshold", 0.1}, {"value", 0.0}}},
      {"add", {{"alpha", 2}}},
      {"sub", {{"alpha", 1}}},
      {"div", {{"rounding_mode", nullptr}}}};
  int last = 0;
  for (const auto& op : pointwise_op_names()) {
    int id = static_cast<int>(nodes.size());
    json node = tensor_node(id, op, op, dtype);
    json args = {{{"ref", last}}};
    if (pointwise_arity(op) == 2) args.push_back(id % 2 ? json{{"ref", 1}} : json{{"ref", 2}});
    node["args"] = args;
    node["params"] = params.count(op) ? params.at(op) : json::object();
    nodes.push_back(node);
    last = id;
  }
  // And pow's special exponent: a number written in the source.
  int id = static_cast<int>(nodes.size());
  json node = tensor_node(id, "pow_3", "pow", dtype);
  node["args"] = {{{"ref", last}}, {{"const", 3.0}}};
  nodes.push_back(node);
  return {{"traced", true}, {"nodes", nodes}, {"outputs", {{{"ref", id}}}}, {"num_inputs", 3}, {"params", json::array()}};
}

PointwisePlan plan_for(const json& j) {
  auto g = OpGraph::from_json(j);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  auto m = match_seed(*g);
  EXPECT_TRUE(m.matched()) << m.reason;
  return m.plan_as<PointwisePlan>() ? *m.plan_as<PointwisePlan>() : PointwisePlan{};
}

std::string swish_source() {
  json j = {{"traced", true},
            {"nodes",
             {tensor_node(0, "x", "input", "float32"),
              {{"id", 1}, {"name", "sigmoid"}, {"op", "sigmoid"}, {"args", {{{"ref", 0}}}}, {"dtype", "float32"},
               {"shape", {1000, 37}}},
              {{"id", 2}, {"name", "mul"}, {"op", "mul"}, {"args", {{{"ref", 0}}, {{"ref", 1}}}}, {"dtype", "float32"},
               {"shape", {1000, 37}}}}},
            {"outputs", {{{"ref", 2}}}},
            {"num_inputs", 1},
            {"params", json::array()}};
  j["nodes"][0]["index"] = 0;
  return generate_pointwise_kernel(plan_for(j), CommentText("swish.py"));
}

// One unary op of the table on x, e.g. unary_source("relu") or unary_source("elu", {{"alpha", 1.0}}).
std::string unary_source(const std::string& op, json params = json::object()) {
  json j = {{"traced", true},
            {"nodes",
             {tensor_node(0, "x", "input", "float32"),
              {{"id", 1}, {"name", op}, {"op", op}, {"args", {{{"ref", 0}}}}, {"params", params},
               {"dtype", "float32"}, {"shape", {1000, 37}}}}},
            {"outputs", {{{"ref", 1}}}},
            {"num_inputs", 1},
            {"params", json::array()}};
  j["nodes"][0]["index"] = 0;
  return generate_pointwise_kernel(plan_for(j), CommentText(op + ".py"));
}

std::string launch_defaults(const std::string& src) {
  auto knobs = parse_knobs(src);
  EXPECT_TRUE(knobs.ok()) << (knobs.ok() ? "" : knobs.error().message);
  return knobs.ok() ? knobs->describe(knobs->defaults()) : "";
}

using cutegen::seed::testing::contains;

}  // namespace

// The default launch follows the chain's cost per element (measured on the H200,
// benchmarks/results.md): cheap chains one vector per thread, 256 threads; chains
// with a transcendental call two vectors per thread, 128 threads. Either way a CTA per 1024 fp32 values.
TEST(PointwiseKernel, TheDefaultLaunchFollowsTheChainsCostPerElement) {
  for (const auto& cheap : {unary_source("relu"), unary_source("hardtanh", {{"min_val", -1.0}, {"max_val", 1.0}}),
                            unary_source("abs")}) {
    EXPECT_EQ(launch_defaults(cheap), "EW_THREADS=256 EW_VEC=4 EW_UNROLL=1 EW_GRID_STRIDE=0 EW_BLOCKS_PER_SM=8");
    EXPECT_TRUE(contains(cheap, "The chain is cheap arithmetic")) << cheap;
  }
  for (const auto& heavy : {unary_source("elu", {{"alpha", 1.0}}), unary_source("selu"), unary_source("sigmoid"),
                            unary_source("softplus", {{"beta", 1.0}, {"threshold", 20.0}}), unary_source("tanh"),
                            unary_source("gelu", {{"approximate", "none"}})}) {
    EXPECT_EQ(launch_defaults(heavy), "EW_THREADS=128 EW_VEC=4 EW_UNROLL=2 EW_GRID_STRIDE=0 EW_BLOCKS_PER_SM=8");
    EXPECT_TRUE(contains(heavy, "The chain calls a transcendental function")) << heavy;
  }
  EXPECT_FALSE(contains(unary_source("relu"), "{{")) << "a placeholder was left in the text";
}

// The template's register bound holds for the defaults too: eight-wide half vectors, two per thread, for
// five operands would be 80 values; that chain keeps one vector per thread.
TEST(PointwiseKernel, TheDefaultLaunchKeepsTheRegisterBound) {
  json nodes = json::array();
  for (int i = 0; i < 5; ++i) {
    nodes.push_back(tensor_node(i, "x" + std::to_string(i), "input", "bfloat16"));
    nodes.back()["index"] = i;
  }
  int last = 0;
  for (int i = 1; i < 5; ++i) {
    const int id = static_cast<int>(nodes.size());
    json n = tensor_node(id, "add", "add", "bfloat16");
    n["args"] = {{{"ref", last}}, {{"ref", i}}};
    n["params"] = {{"alpha", 1}};
    nodes.push_back(n);
    last = id;
  }
  const int id = static_cast<int>(nodes.size());
  json e = tensor_node(id, "exp", "exp", "bfloat16");
  e["args"] = {{{"ref", last}}};
  nodes.push_back(e);
  json g = {{"traced", true}, {"nodes", nodes}, {"outputs", {{{"ref", id}}}}, {"num_inputs", 5}, {"params", json::array()}};
  const std::string src = generate_pointwise_kernel(plan_for(g), CommentText("five.py"));
  auto knobs = parse_knobs(src);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->describe(knobs->defaults()), "EW_THREADS=256 EW_VEC=8 EW_UNROLL=1 EW_GRID_STRIDE=0 EW_BLOCKS_PER_SM=8");
  EXPECT_TRUE(knobs->satisfies(knobs->defaults()));
  // One fp32 operand fits two vectors: the transcendental launch.
  EXPECT_EQ(launch_defaults(unary_source("exp")), "EW_THREADS=128 EW_VEC=4 EW_UNROLL=2 EW_GRID_STRIDE=0 EW_BLOCKS_PER_SM=8");
}

TEST(PointwiseKernel, TheFunctorIsTheChainOneStatementPerOp) {
  std::string src = swish_source();
  EXPECT_TRUE(contains(src, "// Seed kernel for swish.py")) << src;
  EXPECT_TRUE(contains(src, "//   y = mul(x, sigmoid(x))")) << src;
  EXPECT_TRUE(contains(src, "  __device__ __forceinline__ float operator()(float x0) const {\n"
                            "    const float v1 = (1.f / (1.f + expf(-x0)));  // sigmoid(x0)\n"
                            "    const float v2 = (x0 * v1);  // mul(x0, v1)\n"
                            "    return v2;\n"))
      << src;
  EXPECT_TRUE(contains(src, "using Element = float;")) << src;
  EXPECT_TRUE(contains(src, "constexpr int kOperandInput[kOperands] = { 0 };")) << src;
  EXPECT_TRUE(contains(src, "constexpr int kNumInputs = 1;")) << src;
  EXPECT_TRUE(contains(src, "#define EW_VEC 4\n")) << src;
  EXPECT_FALSE(contains(src, "{{")) << "a placeholder was left: " << src;
}

TEST(PointwiseKernel, ScalarsAreReadFromTheirDescriptorsOnEveryCall) {
  std::string src = generate_pointwise_kernel(plan_for(every_op_graph("float32")), CommentText("every_op.py"));
  EXPECT_TRUE(contains(src, "  float s2 = 0.f;  // forward argument s (float64), read on every call\n")) << src;
  EXPECT_TRUE(contains(src, "  if (!inputs[2].is_host_scalar) return CUTEGEN_ERROR_BAD_ARGUMENTS;\n"
                            "  op.s2 = static_cast<float>(inputs[2].scalar_f);\n"))
      << src;
  EXPECT_TRUE(contains(src, "operator()(float x0, float x1)")) << src;
  EXPECT_TRUE(contains(src, "constexpr int kOperandInput[kOperands] = { 0, 1 };")) << src;
  EXPECT_FALSE(contains(src, "{{")) << src;
}

TEST(PointwiseKernel, HalfTypesComputeInFloatAndUseEightWideVectors) {
  std::string src = generate_pointwise_kernel(plan_for(every_op_graph("bfloat16")), CommentText("every_op.py"));
  EXPECT_TRUE(contains(src, "using Element = cute::bfloat16_t;")) << src;
  EXPECT_TRUE(contains(src, "constexpr cutegen_dtype kDtype = CUTEGEN_BFLOAT16;")) << src;
  EXPECT_TRUE(contains(src, "#define EW_VEC 8\n")) << src;
}

// One nvcc build through the compile stage as the judge runs it (source rules, nvcc, library checks,
// the CuTe check per kernel). fp32 only, to keep CI short: half types differ in the element type
// alone, and the GPU suite's seed stage builds and judges an fp16 seed.
TEST(SeedCompile, EveryOpChainBuildsAndPassesEveryStaticCheck) {
  seed::testing::RealCompiler compiler;
  ASSERT_TRUE(compiler.ready());
  std::string src = generate_pointwise_kernel(plan_for(every_op_graph("float32")), CommentText("every_op.py"));
  auto out = compiler.compile(src, "every_op.cu");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << "\n" << out->log << "\n" << src;
}

namespace {
RowSoftmaxPlan log_softmax_plan() {
  return {.log = true, .shape = {64, 1000}, .num_contract_inputs = 2, .input = 1, .pattern = "log_softmax(x, dim=1)"};
}
}  // namespace

TEST(RowSoftmaxKernel, TheSecondPassIsSoftmaxsOrLogSoftmaxs) {
  std::string log = generate_row_softmax_kernel(log_softmax_plan(), CommentText("log_softmax.py"));
  EXPECT_TRUE(contains(log, "//   y = log_softmax(x, dim=1)")) << log;
  EXPECT_TRUE(contains(log, "const float shift = row.max + logf(row.sum);")) << log;
  EXPECT_TRUE(contains(log, "frag(i) = frag(i) - shift;")) << log;
  EXPECT_TRUE(contains(log, "constexpr int kNumInputs = 2;\nconstexpr int kInput = 1;")) << log;
  EXPECT_FALSE(contains(log, "{{")) << log;
  RowSoftmaxPlan plain = log_softmax_plan();
  plain.log = false;
  std::string sm = generate_row_softmax_kernel(plain, CommentText("softmax.py"));
  EXPECT_TRUE(contains(sm, "frag(i) = expf(frag(i) - row.max) * inv;")) << sm;
}

// The log variant through the real compile stage (the plain one differs in one line and is what
// attacks/honest/softmax_rows.cu, which compile_tests builds, already is).
TEST(SeedCompile, LogSoftmaxBuildsAndPassesEveryStaticCheck) {
  CUTEGEN_SLOW_COMPILE_TEST("the log-softmax seed; gpu_seed.py builds and judges the softmax problems");
  seed::testing::RealCompiler compiler;
  ASSERT_TRUE(compiler.ready());
  std::string src = generate_row_softmax_kernel(log_softmax_plan(), CommentText("log_softmax.py"));
  auto out = compiler.compile(src, "log_softmax.cu");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->verdict, CompileVerdict::ok) << out->feedback() << "\n" << out->log << "\n" << src;
}

// The seeds declare knobs for `cutegen tune` and the loop's --tune: the tuner must read them.
TEST(SeedKnobs, BothTemplatesDeclareKnobsTheTunerReads) {
  auto pointwise = parse_knobs(generate_pointwise_kernel(plan_for(every_op_graph("float32")), CommentText("every_op.py")));
  ASSERT_TRUE(pointwise.ok()) << pointwise.error().message;
  ASSERT_EQ(pointwise->knobs.size(), 5u);
  EXPECT_EQ(pointwise->describe(pointwise->defaults()),
            "EW_THREADS=128 EW_VEC=4 EW_UNROLL=2 EW_GRID_STRIDE=0 EW_BLOCKS_PER_SM=8");  // the chain has exp, tanh, ...
  EXPECT_TRUE(pointwise->satisfies(pointwise->defaults()));
  EXPECT_TRUE(plan_variants(*pointwise, 12).ok());
  auto softmax = parse_knobs(generate_row_softmax_kernel(log_softmax_plan(), CommentText("log_softmax.py")));
  ASSERT_TRUE(softmax.ok()) << softmax.error().message;
  EXPECT_EQ(softmax->describe(softmax->defaults()), "SMX_THREADS=256");
}
