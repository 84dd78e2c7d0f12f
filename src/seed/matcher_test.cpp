// The matcher on hand-written trace answers (the worker's side is tested in python/tests/test_op_graph.py),
// and the answer's parsing at the edge.

#include <gtest/gtest.h>

#include "seed/graph_util.h"
#include "seed/testdata/graph_builders.h"

using namespace cutegen::seed;
using namespace cutegen::seed::testing;
using json = nlohmann::json;

namespace {

json tensor(json node, const std::vector<int64_t>& shape = {64, 128}, const std::string& dtype = "float32") {
  node["dtype"] = dtype;
  node["shape"] = shape;
  node["contiguous"] = true;
  return node;
}
json input_of(int id, const std::string& name, int index = -1) {
  return tensor({{"id", id}, {"name", name}, {"op", "input"}, {"index", index < 0 ? id : index}});
}
json op(int id, const std::string& name, json args, json params = json::object()) {
  return tensor({{"id", id}, {"name", name + std::to_string(id)}, {"op", name}, {"args", args}, {"params", params}});
}
json graph_of(json nodes, json outputs, int num_inputs, json params = json::array()) {
  return {{"traced", true}, {"nodes", nodes}, {"outputs", outputs}, {"num_inputs", num_inputs}, {"params", params}};
}

}  // namespace

TEST(OpGraphJson, MalformedAnswersNameTheField) {
  auto no_traced = OpGraph::from_json(json::object());
  ASSERT_FALSE(no_traced.ok());
  EXPECT_EQ(no_traced.error().message, "the worker's trace answer is malformed: traced is missing");
  auto forward_ref = OpGraph::from_json(graph_of({input_of(0, "x"), op(1, "relu", {ref(1)})}, {ref(1)}, 1));
  ASSERT_FALSE(forward_ref.ok());
  EXPECT_EQ(forward_ref.error().message, "the worker's trace answer is malformed: nodes[1].args[0] refers forward");
  auto bad_ref = OpGraph::from_json(graph_of({input_of(0, "x")}, {ref(3)}, 1));
  ASSERT_FALSE(bad_ref.ok());
  EXPECT_EQ(bad_ref.error().message, "the worker's trace answer is malformed: outputs[0].ref is not a node id");
}

TEST(OpGraphJson, ReadsParamsScalarsAndNonFiniteConstants) {
  json j = graph_of({input_of(0, "x"), {{"id", 1}, {"name", "s"}, {"op", "input"}, {"index", 1}, {"scalar", true},
                                  {"dtype", "float64"}},
                  op(2, "clamp", {ref(0)}, {{"min", nullptr}, {"max", "inf"}}), op(3, "mul", {ref(2), num(2)})},
                 {ref(3)}, 2);
  auto g = OpGraph::from_json(j);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(g->node(1).scalar);
  EXPECT_EQ(g->node(1).scalar_dtype, "float64");
  EXPECT_FALSE(g->node(1).type.has_value());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(g->node(2).params.at("min")));
  EXPECT_TRUE(std::isinf(std::get<double>(g->node(2).params.at("max"))));
  EXPECT_EQ(g->node(3).args[1].value, 2.0);
  EXPECT_EQ(g->node(0).type->shape, (std::vector<int64_t>{64, 128}));
}

TEST(Matcher, SwishIsAChainOverOneInput) {
  auto m = match(graph_of({input_of(0, "x"), op(1, "sigmoid", {ref(0)}), op(2, "mul", {ref(0), ref(1)})}, {ref(2)}, 1));
  ASSERT_TRUE(m.matched()) << m.reason;
  const auto& p = *m.plan_as<PointwisePlan>();
  EXPECT_EQ(p.pattern, "mul(x, sigmoid(x))");
  EXPECT_EQ(m.ops, "sigmoid, mul");
  EXPECT_EQ(p.tensor_inputs, (std::vector<int>{0}));
  EXPECT_EQ(p.num_contract_inputs, 1);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].value, "v1");
  EXPECT_EQ(p.steps[0].expr, "(1.f / (1.f + expf(-x0)))");
  EXPECT_EQ(p.steps[1].expr, "(x0 * v1)");
  EXPECT_EQ(p.steps[1].what, "mul(x0, v1)");
  EXPECT_EQ(p.result, "v2");
  EXPECT_EQ(p.dtype, "float32");
}

TEST(Matcher, ModuleConstantsAndScalarInputsAndParameters) {
  // y = leaky_relu(a * s, 0.2) + w, with s a Python float argument and w a parameter of the output's shape.
  json scalar = {{"id", 1}, {"name", "s"}, {"op", "input"}, {"index", 1}, {"scalar", true}, {"dtype", "float64"}};
  json param = tensor({{"id", 2}, {"name", "w"}, {"op", "param"}, {"index", 2}});
  auto m = match(graph_of({input_of(0, "a"), scalar, param, op(3, "mul", {ref(0), ref(1)}),
                        op(4, "leaky_relu", {ref(3)}, {{"negative_slope", 0.2}}),
                        op(5, "add", {ref(4), ref(2)}, {{"alpha", 1}})},
                       {ref(5)}, 2, {"w"}));
  ASSERT_TRUE(m.matched()) << m.reason;
  const auto& p = *m.plan_as<PointwisePlan>();
  EXPECT_EQ(p.pattern, "add(leaky_relu(mul(a, s), negative_slope=0.2), w)");
  EXPECT_EQ(p.tensor_inputs, (std::vector<int>{0, 2}));
  EXPECT_EQ(p.tensor_names, (std::vector<std::string>{"a", "w"}));
  ASSERT_EQ(p.scalars.size(), 1u);
  EXPECT_EQ(p.scalars[0].member, "s1");
  EXPECT_EQ(p.scalars[0].index, 1);
  EXPECT_EQ(p.num_contract_inputs, 3);
  EXPECT_EQ(p.steps[0].expr, "(x0 * s1)");
  EXPECT_EQ(p.steps[1].expr, "(v3 > 0.f ? v3 : v3 * 0.2f)");
  EXPECT_EQ(p.steps[2].expr, "(v4 + x1)");
}

TEST(Matcher, NodesTheOutputDoesNotNeedAreIgnored) {
  auto m = match(graph_of({input_of(0, "x"), op(1, "Tensor.size", {ref(0)}), op(2, "relu", {ref(0)})}, {ref(2)}, 1));
  ASSERT_TRUE(m.matched()) << m.reason;
  EXPECT_EQ(m.ops, "relu");
}

TEST(Matcher, HalfPrecisionChainsMatch) {
  auto m = match(graph_of({tensor({{"id", 0}, {"name", "x"}, {"op", "input"}, {"index", 0}}, {8}, "bfloat16"),
                        tensor({{"id", 1}, {"name", "t"}, {"op", "tanh"}, {"args", {ref(0)}}}, {8}, "bfloat16")},
                       {ref(1)}, 1));
  ASSERT_TRUE(m.matched()) << m.reason;
  EXPECT_EQ(m.plan_as<PointwisePlan>()->dtype, "bfloat16");
}

TEST(Matcher, UnknownOpsAreNamedInTheNoSeedLine) {
  json matmul = tensor({{"id", 2}, {"name", "matmul"}, {"op", "torch.matmul"}, {"args", {ref(0), ref(1)}}, {"known", false}});
  auto m = match(graph_of({input_of(0, "a"), input_of(1, "b"), matmul, op(3, "relu", {ref(2)})}, {ref(3)}, 2));
  ASSERT_FALSE(m.matched());
  EXPECT_EQ(m.no_seed_line(),
            "no seed for this operator graph: torch.matmul, relu (torch.matmul is not a pointwise op the seed knows)");
}

TEST(Matcher, TheWorkersNoteIsTheReason) {
  json clamp = tensor({{"id", 2}, {"name", "clamp"}, {"op", "clamp"}, {"args", {ref(0), ref(1)}}, {"known", false},
                       {"note", "clamp's min is a tensor, not a number"}});
  auto m = match(graph_of({input_of(0, "x"), input_of(1, "lo"), clamp}, {ref(2)}, 2));
  ASSERT_FALSE(m.matched());
  EXPECT_EQ(m.reason, "clamp: clamp's min is a tensor, not a number");
}

// A known op whose arguments the worker could not bind has none in the graph: no route may read the absent
// `dim` as None (a mean over several dimensions, as the worker once refused them, was a loss of everything).
TEST(Matcher, AnOpTheWorkerCouldNotBindIsRefusedBeforeAnyRoute) {
  json mean = tensor({{"id", 1}, {"name", "mean"}, {"op", "mean"}, {"args", {ref(0)}}, {"known", false},
                      {"note", "mean over 2 dimensions at once"}},
                     {64, 1});
  auto m = match(graph_of({input_of(0, "x"), mean}, {ref(1)}, 1));
  ASSERT_FALSE(m.matched());
  EXPECT_EQ(m.no_seed_line(), "no seed for this operator graph: mean (mean: mean over 2 dimensions at once)");
  json unnoted = mean;
  unnoted.erase("note");
  EXPECT_EQ(match(graph_of({input_of(0, "x"), unnoted}, {ref(1)}, 1)).reason,
            "mean: the worker could not read its arguments");
}

// A dropout (training mode, a module's default) is random on every call: the reason names it, not the
// softmax or norm a route stopped at after it (KernelBench level 2, 66 and 83).
TEST(Matcher, ADropoutIsRefusedAsRandom) {
  for (const char* spelling : {"nn.Dropout", "dropout"}) {
    auto m = match(graph_of({input_of(0, "x"), op(1, spelling, {ref(0)}), op(2, "relu", {ref(1)})}, {ref(2)}, 2));
    ASSERT_FALSE(m.matched()) << spelling;
    EXPECT_EQ(m.reason, std::string(spelling) + ": a random mask on every call in training mode (a module's "
                                                 "default); the seeds are deterministic kernels");
  }
}

TEST(Matcher, BroadcastingIsTheBroadcastSeedsOrRefusedWithTheOperand) {
  json bias = tensor({{"id", 1}, {"name", "b"}, {"op", "input"}, {"index", 1}}, {128});
  auto m = match(graph_of({input_of(0, "x"), bias, op(2, "add", {ref(0), ref(1)})}, {ref(2)}, 2));
  ASSERT_FALSE(m.plan_as<PointwisePlan>());
  ASSERT_TRUE(m.plan_as<BroadcastPlan>()) << m.reason;
  EXPECT_EQ(m.plan_as<BroadcastPlan>()->strides, (std::vector<std::vector<int64_t>>{{128, 1}, {0, 1}}));
  EXPECT_EQ(m.description(), "broadcast pointwise chain y = add(x, b)");
  json odd = tensor({{"id", 1}, {"name", "b"}, {"op", "input"}, {"index", 1}}, {100});
  auto refused = match(graph_of({input_of(0, "x"), odd, op(2, "add", {ref(0), ref(1)})}, {ref(2)}, 2));
  ASSERT_FALSE(refused.matched());
  EXPECT_EQ(refused.reason, "b does not broadcast to the output");
}

// x - p.view(1, -1, 1, 1) (KernelBench level 2's 89 after its softmax): the parameter's values in the view's shape,
// broadcast over the rest; a view of a computed value is no leaf.
TEST(Matcher, AViewOfAParameterIsABroadcastOperandInTheViewsShape) {
  json p = tensor({{"id", 1}, {"name", "p"}, {"op", "param"}, {"index", 1}}, {16});
  json view = tensor({{"id", 2}, {"name", "view"}, {"op", "Tensor.view"}, {"args", {ref(1)}}, {"known", false}},
                     {1, 16, 1, 1});
  json x = tensor({{"id", 0}, {"name", "x"}, {"op", "input"}, {"index", 0}}, {4, 16, 5, 6});
  json sub = tensor({{"id", 3}, {"name", "sub"}, {"op", "sub"}, {"args", {ref(0), ref(2)}}, {"params", {{"alpha", 1}}}},
                    {4, 16, 5, 6});
  auto m = match(graph_of({x, p, view, sub}, {ref(3)}, 1, {"p"}));
  ASSERT_TRUE(m.plan_as<BroadcastPlan>()) << m.reason;
  const BroadcastPlan& plan = *m.plan_as<BroadcastPlan>();
  EXPECT_EQ(plan.inputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.sizes, (std::vector<int64_t>{4 * 16 * 5 * 6, 16}));
  EXPECT_EQ(plan.strides, (std::vector<std::vector<int64_t>>{{16 * 5 * 6, 5 * 6, 6, 1}, {0, 1, 0, 0}}));
  EXPECT_EQ(m.description(), "broadcast pointwise chain y = sub(x, Tensor.view(p))");
  // The view of a relu of p is a computed operand: not taken.
  json relu = tensor({{"id", 2}, {"name", "relu"}, {"op", "relu"}, {"args", {ref(1)}}}, {16});
  json view_of_relu = view;
  view_of_relu["id"] = 3;
  view_of_relu["args"] = {ref(2)};
  json sub2 = sub;
  sub2["id"] = 4;
  sub2["args"] = {ref(0), ref(3)};
  EXPECT_FALSE(match(graph_of({x, p, relu, view_of_relu, sub2}, {ref(4)}, 1, {"p"})).matched());
}

TEST(Matcher, MixedAndIntegerDtypesAreRefused) {
  json half = tensor({{"id", 1}, {"name", "h"}, {"op", "input"}, {"index", 1}}, {64, 128}, "float16");
  auto mixed = match(graph_of({input_of(0, "x"), half, op(2, "add", {ref(0), ref(1)})}, {ref(2)}, 2));
  ASSERT_FALSE(mixed.matched());
  EXPECT_EQ(mixed.reason, "input h is float16 while the output is float32 (mixed dtypes have no seed yet)");
  auto ints = match(graph_of({tensor({{"id", 0}, {"name", "i"}, {"op", "input"}, {"index", 0}}, {4}, "int64"),
                           tensor({{"id", 1}, {"name", "n"}, {"op", "neg"}, {"args", {ref(0)}}}, {4}, "int64")},
                          {ref(1)}, 1));
  ASSERT_FALSE(ints.matched());
  EXPECT_EQ(ints.reason, "the output is int64; the pointwise seed handles float32, float16 and bfloat16");
}

TEST(Matcher, TupleOutputsAndUntracedGraphsHaveNoSeed) {
  auto two = match(graph_of({input_of(0, "x"), op(1, "relu", {ref(0)})}, {ref(1), ref(0)}, 1));
  ASSERT_FALSE(two.matched());
  EXPECT_EQ(two.reason, "forward() returns 2 outputs; the pointwise seed writes one");
  auto untraced = match({{"traced", false}, {"reason", "torch.fx cannot trace forward(): TraceError: x"}});
  ASSERT_FALSE(untraced.matched());
  EXPECT_EQ(untraced.no_seed_line(), "no seed for this operator graph: torch.fx cannot trace forward(): TraceError: x");
}

TEST(Matcher, AFormulaErrorIsTheReason) {
  auto m = match(graph_of({input_of(0, "x"), op(1, "gelu", {ref(0)}, {{"approximate", "fast"}})}, {ref(1)}, 1));
  ASSERT_FALSE(m.matched());
  EXPECT_EQ(m.no_seed_line(), "no seed for this operator graph: gelu (gelu with approximate='fast' (torch knows none and tanh))");
}

TEST(Matcher, AnUnknownOpIsTheReasonEvenWhenShapesDifferToo) {
  json b = tensor({{"id", 1}, {"name", "b"}, {"op", "input"}, {"index", 1}}, {128, 32});
  json mm = tensor({{"id", 2}, {"name", "mm"}, {"op", "torch.mm"}, {"args", {ref(0), ref(1)}}, {"known", false}}, {64, 32});
  auto m = match(graph_of({input_of(0, "a"), b, mm}, {ref(2)}, 2));
  ASSERT_FALSE(m.matched());
  EXPECT_EQ(m.reason, "torch.mm is not a pointwise op the seed knows");
}

namespace {
json softmax_graph(const std::string& op, double dim, const std::string& dtype = "float32") {
  json x = tensor({{"id", 0}, {"name", "x"}, {"op", "input"}, {"index", 0}}, {64, 128}, dtype);
  json sm = tensor({{"id", 1}, {"name", op}, {"op", op}, {"args", {ref(0)}}, {"params", {{"dim", dim}, {"dtype", nullptr}}}},
                   {64, 128}, dtype);
  return graph_of({x, sm}, {ref(1)}, 1);
}
}  // namespace

TEST(Matcher, SoftmaxAndLogSoftmaxOverTheLastDimHaveARowSeed) {
  auto m = match(softmax_graph("softmax", 1));
  ASSERT_TRUE(m.matched()) << m.reason;
  ASSERT_TRUE(m.plan_as<RowSoftmaxPlan>());
  EXPECT_FALSE(m.plan_as<RowSoftmaxPlan>()->log);
  EXPECT_EQ(m.description(), "row softmax y = softmax(x, dim=1)");
  auto log = match(softmax_graph("log_softmax", -1));
  ASSERT_TRUE(log.plan_as<RowSoftmaxPlan>()) << log.reason;
  EXPECT_TRUE(log.plan_as<RowSoftmaxPlan>()->log);
  EXPECT_EQ(log.plan_as<RowSoftmaxPlan>()->input, 0);
  EXPECT_EQ(log.plan_as<RowSoftmaxPlan>()->num_contract_inputs, 1);
}

// Over another dimension than the last (KernelBench level 2's softmax over an NCHW tensor's channels): the
// strided kernel, a thread per column of the (outer, extent, inner) view.
TEST(Matcher, SoftmaxOverAnotherDimensionIsTheStridedKernel) {
  auto dim0 = match(softmax_graph("softmax", 0));
  ASSERT_TRUE(dim0.plan_as<RowSoftmaxPlan>()) << dim0.reason;
  const RowSoftmaxPlan& p = *dim0.plan_as<RowSoftmaxPlan>();
  EXPECT_EQ(p.kernel, SoftmaxKernel::strided_template);
  EXPECT_EQ((std::vector<int64_t>{p.dim, p.outer, p.extent, p.inner}), (std::vector<int64_t>{0, 1, 64, 128}));
  EXPECT_EQ(dim0.description(), "softmax over a strided dimension y = softmax(x, dim=0)");
  EXPECT_EQ(dim0.pattern(), "strided softmax: softmax(x, dim=0)");
  auto src = dim0.plan->emit(CommentText("softmax_dim0.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr int64_t kOuter = 1, kExtent = 64, kInner = 128;")) << *src;
  EXPECT_TRUE(contains(*src, "gY(i, r, o) = expf(v - acc.max) * inv;")) << *src;
  EXPECT_TRUE(contains(*src, "// cutegen:knob SMS_THREADS in")) << *src;
  EXPECT_FALSE(contains(*src, "{{")) << *src;
  // log_softmax over the channels of a (2, 3, 4, 5) tensor, as a negative dim: x - max - log(sum).
  json x = input_of(0, "x");
  x["shape"] = {2, 3, 4, 5};
  json sm = op(1, "log_softmax", {ref(0)}, {{"dim", -3}, {"dtype", nullptr}});
  sm["shape"] = {2, 3, 4, 5};
  auto channels = match(graph_of({x, sm}, {ref(1)}, 1));
  ASSERT_TRUE(channels.plan_as<RowSoftmaxPlan>()) << channels.reason;
  const RowSoftmaxPlan& c = *channels.plan_as<RowSoftmaxPlan>();
  EXPECT_EQ((std::vector<int64_t>{c.dim, c.outer, c.extent, c.inner}), (std::vector<int64_t>{1, 2, 3, 20}));
  auto log_src = channels.plan->emit(CommentText("log_softmax_channels.py"));
  ASSERT_TRUE(log_src.ok()) << log_src.error().message;
  EXPECT_TRUE(contains(*log_src, "const float shift = acc.max + logf(acc.sum);")) << *log_src;
  EXPECT_TRUE(contains(*log_src, "gY(i, r, o) = v - shift;")) << *log_src;
}

TEST(Matcher, RowSoftmaxRefusalsSayWhy) {
  auto dim2 = match(softmax_graph("softmax", 2));
  ASSERT_FALSE(dim2.matched());
  EXPECT_EQ(dim2.no_seed_line(), "no seed for this operator graph: softmax (softmax over dim 2 of a 2-d tensor)");
  auto half = match(softmax_graph("softmax", 1, "float16"));
  ASSERT_FALSE(half.matched());
  EXPECT_EQ(half.reason, "softmax in float16 (the row-softmax seed is float32)");
  json j = graph_of({input_of(0, "x"), op(1, "relu", {ref(0)}), op(2, "softmax", {ref(1)}, {{"dim", 1}})}, {ref(2)}, 1);
  auto chained = match(j);
  ASSERT_FALSE(chained.matched());
  EXPECT_EQ(chained.reason, "softmax of a computed value (the row-softmax seed takes a forward input)");
}

// A chain that reaches a tensor it was not given names the op that reads it in one short line, not the
// chain's expression (which repeats shared values and ran to hundreds of characters in refusals).
TEST(Matcher, AChainReadingAnotherTensorNamesTheOpThatReadsIt) {
  json nodes = {input_of(0, "x"), input_of(1, "y")};
  int v = 0, id = 2;
  for (int i = 0; i < 8; ++i) {  // v = mul(add(v, 1), sigmoid(v)), eight times over
    nodes.push_back(op(id, "add", {ref(v), num(1)}));
    nodes.push_back(op(id + 1, "sigmoid", {ref(v)}));
    nodes.push_back(op(id + 2, "mul", {ref(id), ref(id + 1)}));
    v = id + 2;
    id += 3;
  }
  nodes.push_back(op(id, "sub", {ref(v), ref(1)}));
  auto g = OpGraph::from_json(graph_of(nodes, {ref(id)}, 2));
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::vector<PointwiseStep> steps;
  auto chain = emit_chain(*g, id, {{0, "x0"}}, "v", steps);
  ASSERT_FALSE(chain.ok());
  EXPECT_EQ(chain.error().message, "sub also reads y: the fused pointwise chain takes no other tensor");
  // The chain being a tensor itself.
  auto itself = emit_chain(*g, 1, {{0, "x0"}}, "v", steps);
  ASSERT_FALSE(itself.ok());
  EXPECT_EQ(itself.error().message, "the fused pointwise chain is y itself, not a value the seed computes");
}
