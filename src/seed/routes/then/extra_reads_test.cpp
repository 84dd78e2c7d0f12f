// A chain's steps reading more than the previous result (then/extra_reads.h, then/chain_values.h): the problem's
// forward input 0 and earlier chain values read again after a cut, on KernelBench level 2's 51 and 92 shapes at
// small sizes and their near misses; the graph after a cut with its extra inputs; a step whose extra read is the
// seed's own input folded into that seed's store; the workspace layout that keeps a value until its last reader;
// and (slow tier) the chained files through the real compile stage with their workspace queries on the host.

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "common/slow_compile_tests.h"
#include "seed/graph_util.h"
#include "seed/routes/conv_then/conv_then_route.h"
#include "seed/routes/gemm_then/gemm_then_route.h"
#include "seed/routes/norm/norm_route.h"
#include "seed/routes/pointwise/pointwise_route.h"
#include "seed/routes/row_softmax/row_softmax_route.h"
#include "seed/routes/then/chain_values.h"
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

// KernelBench level 2's 51 at a small size: x + gelu(logsumexp(mean(fc(x) - subtract, dim=1, keepdim=True), dim=1,
// keepdim=True)), x read through x.clone().detach(); x (m, k), fc = nn.Linear(k, n). The parameters in the trace's
// order: subtract, then fc's weight and bias.
json xr_linear_mean_residual(int64_t m = 64, int64_t k = 96, int64_t n = 80) {
  return graph({input(0, "x", {m, k}), node(1, "identity", {ref(0)}, json::object(), {m, k}),
                node(2, "identity", {ref(1)}, json::object(), {m, k}), param(3, "gemm_weight", 2, {n, k}),
                param(4, "gemm_bias", 3, {n}),
                node(5, "linear", {ref(0), ref(3), ref(4)}, {{"has_bias", true}}, {m, n}),
                param(6, "subtract", 1, {n}), node(7, "sub", {ref(5), ref(6)}, {{"alpha", 1}}, {m, n}),
                node(8, "mean", {ref(7)}, {{"dim", 1}, {"keepdim", true}, {"dtype", nullptr}}, {m, 1}),
                node(9, "logsumexp", {ref(8)}, {{"dim", 1}, {"keepdim", true}}, {m, 1}),
                node(10, "gelu", {ref(9)}, {{"approximate", "none"}}, {m, 1}),
                node(11, "add", {ref(10), ref(2)}, {{"alpha", 1}}, {m, k})},
               11, 1, {"subtract", "gemm.weight", "gemm.bias"});
}

const std::vector<int64_t> kXrIn = {4, 3, 10, 12}, kXrY = {4, 8, 8, 10};

json xr_conv_params() {
  return {{"dims", 2}, {"groups", 1}, {"in_channels", 3}, {"out_channels", 8}, {"has_bias", true},
          {"k0", 3}, {"k1", 3}, {"s0", 1}, {"s1", 1}, {"p0", 0}, {"p1", 0}, {"d0", 1}, {"d1", 1}};
}

// conv(x) and group_norm of it -- of relu(conv(x)) with `relu` --: the start of KernelBench level 2's 92 at a small
// size (nodes 0-6, or 0-7).
json xr_conv_norm_nodes(bool relu = false) {
  json nodes = json::array({input(0, "x", kXrIn), param(1, "conv_weight", 1, {8, 3, 3, 3}),
                            param(2, "conv_bias", 2, {8}),
                            node(3, "conv", {ref(0), ref(1), ref(2)}, xr_conv_params(), kXrY),
                            param(4, "gn_weight", 3, {8}), param(5, "gn_bias", 4, {8})});
  if (relu) nodes.push_back(node(6, "relu", {ref(3)}, json::object(), kXrY));
  const int id = relu ? 7 : 6;
  nodes.push_back(node(id, "group_norm", {ref(relu ? 6 : 3), ref(4), ref(5)},
                       {{"eps", 1e-5}, {"affine", true}, {"num_groups", 4}, {"has_weight", true}, {"has_bias", true}},
                       kXrY));
  return nodes;
}

// KernelBench level 2's 92: logsumexp(conv(x) + hardswish(tanh(group_norm(conv(x)))), dim=1, keepdim=True); with
// `relu`, the norm of relu(conv(x)) (the convolution's epilogue) while the residual reads conv(x) before it.
json xr_conv_norm_residual_lse(bool relu = false) {
  json nodes = xr_conv_norm_nodes(relu);
  const int n = relu ? 8 : 7;  // the first id after the norm
  nodes.push_back(node(n, "tanh", {ref(n - 1)}, json::object(), kXrY));
  nodes.push_back(node(n + 1, "hardswish", {ref(n)}, json::object(), kXrY));
  nodes.push_back(node(n + 2, "add", {ref(3), ref(n + 1)}, {{"alpha", 1}}, kXrY));
  nodes.push_back(node(n + 3, "logsumexp", {ref(n + 2)}, {{"dim", 1}, {"keepdim", true}}, {4, 1, 8, 10}));
  return graph(nodes, n + 3, 1, {"conv.weight", "conv.bias", "gn.weight", "gn.bias"});
}

// softmax(group_norm(conv(x)), dim=1) + conv(x): the residual comes after a step that is not the norm, so it is no
// input of the seed before it -- the step reads y from the workspace after two more parts have run.
json xr_conv_norm_softmax_residual() {
  json nodes = xr_conv_norm_nodes();
  nodes.push_back(node(7, "softmax", {ref(6)}, {{"dim", 1}, {"dtype", nullptr}}, kXrY));
  nodes.push_back(node(8, "add", {ref(7), ref(3)}, {{"alpha", 1}}, kXrY));
  return graph(nodes, 8, 1, {"conv.weight", "conv.bias", "gn.weight", "gn.bias"});
}

const GemmThenPlan& xr_gemm_plan(const SeedMatch& m) { return *m.plan_as<GemmThenPlan>(); }
const ConvThenPlan& xr_conv_plan(const SeedMatch& m) { return *m.plan_as<ConvThenPlan>(); }

OpGraph xr_parsed(const json& j) {
  auto g = OpGraph::from_json(j);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? *g : OpGraph{};
}

// The chain's code in the emitted file (namespace <chain>::run, or run_pass in passes), one entry per part -- the
// head first -- with the kOffset<k> each reads and the one it writes (-1: the output). A value's region, from
// kOffset<k> and kShape<k>, and kIntermediateBytes, where the parts' own workspaces start.
struct XrPartAccess {
  std::set<int> reads;
  int writes = -1;
};
struct XrFileLayout {
  std::vector<XrPartAccess> parts;
  std::map<int, int64_t> offset, bytes;
  int64_t intermediates = -1;
};

XrFileLayout xr_file_layout(const std::string& src) {
  XrFileLayout layout;
  static const std::regex offset(R"(constexpr size_t kOffset(\d+) = (\d+);)");
  static const std::regex shape(R"(constexpr int64_t kShape(\d+)\[\] = \{([0-9, ]+)\};)");
  static const std::regex intermediates(R"(constexpr size_t kIntermediateBytes = (\d+);)");
  for (auto it = std::sregex_iterator(src.begin(), src.end(), offset); it != std::sregex_iterator(); ++it)
    layout.offset[std::stoi((*it)[1])] = std::stoll((*it)[2]);
  for (auto it = std::sregex_iterator(src.begin(), src.end(), shape); it != std::sregex_iterator(); ++it) {
    int64_t n = 4;
    const std::string dims = (*it)[2];
    static const std::regex number(R"(\d+)");
    for (auto d = std::sregex_iterator(dims.begin(), dims.end(), number); d != std::sregex_iterator(); ++d)
      n *= std::stoll(d->str());
    layout.bytes[std::stoi((*it)[1])] = n;
  }
  std::smatch m;
  if (std::regex_search(src, m, intermediates)) layout.intermediates = std::stoll(m[1]);
  // Each part's block: from its "  {  // " line to the next; the output descriptor `out` is what it writes.
  static const std::regex part_start(R"(\n  \{  // )");
  std::vector<std::size_t> starts;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), part_start); it != std::sregex_iterator(); ++it)
    starts.push_back(static_cast<std::size_t>(it->position()));
  static const std::regex write(R"(const cutegen_tensor out = intermediate\(query \? nullptr : base \+ kOffset(\d+))");
  static const std::regex read(R"(base \+ kOffset(\d+))");
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::size_t end = src.find("\n  }\n", starts[i]);
    const std::string block = src.substr(starts[i], end - starts[i]);
    XrPartAccess part;
    std::smatch w;
    if (std::regex_search(block, w, write)) part.writes = std::stoi(w[1]);
    for (auto it = std::sregex_iterator(block.begin(), block.end(), read); it != std::sregex_iterator(); ++it)
      if (std::stoi((*it)[1]) != part.writes) part.reads.insert(std::stoi((*it)[1]));
    layout.parts.push_back(part);
  }
  return layout;
}

// The file's layout keeps every value until its last reader: the values' regions are apart and below
// kIntermediateBytes (where each part's own workspace starts), and no part between a value's writer and its last
// reader writes its kOffset.
::testing::AssertionResult xr_keeps_values_until_read(const std::string& src) {
  const XrFileLayout f = xr_file_layout(src);
  if (f.parts.empty() || f.intermediates < 0) return ::testing::AssertionFailure() << "no chain code found";
  for (const auto& [k, at] : f.offset) {
    if (!f.bytes.count(k)) return ::testing::AssertionFailure() << "kOffset" << k << " without kShape" << k;
    if (at + f.bytes.at(k) > f.intermediates)
      return ::testing::AssertionFailure() << "value " << k << " ends after kIntermediateBytes";
    for (const auto& [j, other] : f.offset)
      if (j != k && at < other + f.bytes.at(j) && other < at + f.bytes.at(k))
        return ::testing::AssertionFailure() << "values " << k << " and " << j << " overlap";
  }
  for (std::size_t writer = 0; writer < f.parts.size(); ++writer) {
    const int v = f.parts[writer].writes;
    if (v < 0) continue;
    std::size_t last = writer;
    for (std::size_t p = writer + 1; p < f.parts.size(); ++p)
      if (f.parts[p].reads.count(v)) last = p;
    for (std::size_t p = writer + 1; p <= last; ++p)
      if (f.parts[p].writes == v)
        return ::testing::AssertionFailure() << "part " << p << " writes value " << v << " before part " << last
                                             << " reads it";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(ChainExtraReads, GraphAfterPutsTheExtraReadsAfterTheForwardInputs) {
  const OpGraph g = xr_parsed(xr_conv_norm_residual_lse());
  // After the hardswish, the residual reads the convolution's result again: forward input 1, the parameters after it.
  const OpGraph after = graph_after(g, 8, {3});
  EXPECT_EQ(after.num_inputs, 2);
  EXPECT_EQ((std::vector<int>{after.node(8).index, after.node(3).index, after.node(1).index, after.node(2).index,
                              after.node(4).index, after.node(5).index}),
            (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(after.node(3).op, Op::input);
  EXPECT_TRUE(after.node(3).args.empty());
  EXPECT_EQ(after.node(3).type->shape, kXrY);
  EXPECT_EQ(contract_name(after, after.node(4)), "gn.weight");
  // The rest after a head that reads forward input 0 again: x moves after the problem's forward inputs, and every
  // step of the rest has it as its extra read.
  const OpGraph g51 = xr_parsed(xr_linear_mean_residual());
  auto rest = rest_after_head(g51, 10, "matrix product");
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(rest->graph.num_inputs, 2);
  EXPECT_EQ((std::vector<int>{rest->graph.node(10).index, rest->graph.node(0).index, rest->graph.node(6).index,
                              rest->graph.node(3).index}),
            (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(rest->start.input0, 10);
  ASSERT_EQ(rest->start.extras.size(), 1u);
  EXPECT_EQ(rest->start.extras[0].node, 0);
  EXPECT_EQ(match_seed(rest->graph).route(), "broadcast");
  // Where the rest reads only y and leaves, the graph is graph_after's as before.
  auto plain = rest_after_head(xr_parsed(xr_conv_norm_residual_lse()), 3, "convolution");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->start.extras.empty());
  EXPECT_EQ(plain->graph.num_inputs, 1);
}

TEST(ChainExtraReads, KernelBench51sResidualOfTheInputIsABroadcastStepReadingX) {
  auto m = match(xr_linear_mean_residual());
  ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.route() << ": " << m.reason;
  const GemmThenPlan& p = xr_gemm_plan(m);
  EXPECT_EQ(p.head.kernel, GemmKernel::folded);  // the mean moves through the product
  EXPECT_EQ(p.head_shape, (std::vector<int64_t>{64, 1}));
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].seed->route(), "broadcast");
  ASSERT_EQ(p.steps[0].extra_reads.size(), 1u);
  EXPECT_EQ(p.steps[0].extra_reads[0].input, 0);  // x, the problem's forward input 0
  EXPECT_EQ(p.num_forward_inputs, 1);
  EXPECT_TRUE(contains(m.description(), "then broadcast pointwise chain y = add(y, identity(identity(x))): y = gelu("))
      << m.description();
  auto src = m.plan->emit(CommentText("linear_mean_residual.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "constexpr int kNumForward = 1;  // the problem's forward() arguments")) << *src;
  EXPECT_TRUE(contains(*src, "    const cutegen_tensor extra1[] = {inputs[0]};\n"
                             "    const StepInputsWith<1> in1(inputs, intermediate(query ? nullptr : base + kOffset0, "
                             "kShape0), extra1);\n"))
      << *src;
  EXPECT_TRUE(contains(*src, "seed_step1::second_forward(in1.t, in1.kCount, outputs, num_outputs, stream)")) << *src;
  EXPECT_TRUE(contains(*src, "//   its forward input 1: the problem's forward input 0\n")) << *src;
  EXPECT_FALSE(contains(*src, "struct StepInputs {")) << "no step reads only the problem's inputs";
  EXPECT_TRUE(exports_only_the_workspace_pair(*src));
  EXPECT_TRUE(xr_keeps_values_until_read(*src));
}

TEST(ChainExtraReads, KernelBench92sResidualIsFoldedIntoTheNormsStoreReadingItsOwnInput) {
  auto m = match(xr_conv_norm_residual_lse());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.route() << ": " << m.reason;
  const ConvThenPlan& p = xr_conv_plan(m);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].seed->route(), "norm");
  EXPECT_EQ(p.steps[1].seed->route(), "reduce");
  // The residual y + hardswish(tanh(v)) read y as its extra forward input 1; folded, it reads the norm's input 0.
  EXPECT_FALSE(has_extra_reads(p.steps));
  const auto* norm = dynamic_cast<const TypedPlan<NormPlan>*>(p.steps[0].seed.get());
  ASSERT_NE(norm, nullptr);
  ASSERT_TRUE(norm->plan().epilogue);
  ASSERT_EQ(norm->plan().epilogue->operands.size(), 1u);
  EXPECT_EQ(norm->plan().epilogue->operands[0].input, 0);
  EXPECT_EQ(norm->plan().num_contract_inputs, 5);
  EXPECT_TRUE(contains(m.description(), "then pointwise chain y = add(y0, hardswish(tanh(y))) (folded into its store), "
                                        "then reduction y = logsumexp(y, dim=1, keepdim=True): y = conv2d("))
      << m.description();
  auto src = m.plan->emit(CommentText("conv_norm_residual_lse.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "  ep.x0 = cutegen::data_as<const float>(inputs[0], CUTEGEN_FLOAT32);\n")) << *src;
  // Without an extra read left the chain's text is as it always was.
  EXPECT_TRUE(contains(*src, "(which only the\n// convolution reads).\nstruct StepInputs {")) << *src;
  EXPECT_FALSE(contains(*src, "StepInputsWith")) << *src;
  EXPECT_TRUE(xr_keeps_values_until_read(*src));
}

TEST(ChainExtraReads, AnEarlierValueReadAgainStaysInTheWorkspaceUntilItsLastReader) {
  auto m = match(xr_conv_norm_softmax_residual());
  ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.route() << ": " << m.reason;
  const ConvThenPlan& p = xr_conv_plan(m);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].seed->route(), "norm");
  EXPECT_EQ(p.steps[1].seed->route(), "row_softmax");
  EXPECT_EQ(p.steps[2].seed->route(), "pointwise");  // y is not the softmax's input: the add is no fold
  ASSERT_EQ(p.steps[2].extra_reads.size(), 1u);
  EXPECT_EQ(p.steps[2].extra_reads[0].input, -1);
  EXPECT_EQ(p.steps[2].extra_reads[0].value, 0);  // y, the convolution's result
  EXPECT_TRUE(p.steps[0].extra_reads.empty());
  EXPECT_EQ(overwritten_value(chain_layout(p.head_bytes, p.steps), p.steps), "");
  auto src = m.plan->emit(CommentText("conv_norm_softmax_residual.py"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_TRUE(contains(*src, "    // read besides the previous result: y, the convolution's result\n"
                             "    const cutegen_tensor extra3[] = {intermediate(query ? nullptr : base + kOffset0, "
                             "kShape0)};\n"
                             "    const StepInputsWith<1> in3(inputs, intermediate(query ? nullptr : base + kOffset2, "
                             "kShape2), extra3);\n"))
      << *src;
  EXPECT_TRUE(contains(*src, "const StepInputs in1(inputs, ")) << "the steps that read no more keep StepInputs";
  EXPECT_TRUE(contains(*src, "// Step 3: the pointwise route's seed, reading the previous result as its forward input "
                             "0, and besides:\n//   its forward input 1: y, the convolution's result\n"))
      << *src;
  const XrFileLayout f = xr_file_layout(*src);
  ASSERT_EQ(f.parts.size(), 4u);
  EXPECT_EQ(f.parts[0].writes, 0);
  EXPECT_EQ(f.parts[3].reads, (std::set<int>{0, 2}));  // y and the softmax's result
  EXPECT_TRUE(xr_keeps_values_until_read(*src));
}

TEST(ChainExtraReads, AWorkspaceLayoutThatWouldLoseAValueIsNamed) {
  PointwisePlan copy{.dtype = "float32", .shape = {8}, .num_contract_inputs = 2, .tensor_inputs = {0},
                     .tensor_names = {"y"}, .steps = {}, .result = "x0", .pattern = "y"};
  std::vector<ThenStep> steps(3, ThenStep{.seed = matched_plan<kPointwiseRoute>(copy), .shape = {8}, .bytes = 256});
  steps[2].bytes = 0;
  steps[2].extra_reads = {ExtraRead{.node = 3, .value = 0}};  // step 3 reads y again
  ChainLayout layout = chain_layout(256, steps);
  EXPECT_EQ(layout.offsets, (std::vector<int64_t>{0, 256, 512}));
  EXPECT_EQ(layout.intermediates, 768);
  EXPECT_EQ(overwritten_value(layout, steps), "");
  layout.offsets[2] = 0;  // step 2's result over y, which step 3 still reads
  EXPECT_EQ(overwritten_value(layout, steps), "part 2 writes over chain value 0 before part 3 reads it");
  layout = chain_layout(256, steps);
  layout.intermediates = 300;  // the parts' own workspaces over step 1's result
  EXPECT_EQ(overwritten_value(layout, steps), "part 2 writes over chain value 1 before part 2 reads it");
}

TEST(ChainExtraReads, AStepFoldsWhereItsExtraReadIsTheSeedsOwnInputAndNotOverAValueReadLater) {
  RowSoftmaxPlan softmax{.shape = {4, 64}, .num_contract_inputs = 2, .pattern = "softmax(y, dim=1)", .dim = 1,
                         .outer = 4, .extent = 64, .inner = 1, .kernel = SoftmaxKernel::row_template};
  // add(previous, extra): the graph's inputs are the previous result (0), the extra read (1) and a parameter (2).
  PointwisePlan add{.dtype = "float32", .shape = {4, 64}, .num_contract_inputs = 3, .tensor_inputs = {0, 1},
                    .tensor_names = {"y", "y0"}, .steps = {{"v9", "(x0 + x1)", "add(x0, x1)"}}, .result = "v9",
                    .pattern = "add(y, y0)"};
  auto chain = [&](int extra_node) {
    return std::vector<ThenStep>{
        {.seed = matched_plan<kRowSoftmaxRoute>(softmax), .shape = {4, 64}, .bytes = 1024, .previous = 5,
         .stored = 7, .read = 7},
        {.seed = matched_plan<kPointwiseRoute>(add), .shape = {4, 64}, .bytes = 0,
         .extra_reads = {ExtraRead{.node = extra_node}}, .previous = 7, .stored = 8, .read = 8}};
  };
  const ChainStart start{.input0 = 5, .num_forward = 1};
  std::vector<ThenStep> own = chain(5);  // the softmax's own input read again: folded, reading its input 0
  fold_pointwise_steps(own, start);
  ASSERT_EQ(own.size(), 1u);
  const auto* folded = dynamic_cast<const TypedPlan<RowSoftmaxPlan>*>(own[0].seed.get());
  ASSERT_NE(folded, nullptr);
  ASSERT_TRUE(folded->plan().epilogue);
  ASSERT_EQ(folded->plan().epilogue->operands.size(), 1u);
  EXPECT_EQ(folded->plan().epilogue->operands[0].input, 0);
  EXPECT_TRUE(own[0].extra_reads.empty());
  EXPECT_EQ(own[0].stored, 8);
  std::vector<ThenStep> other = chain(3);  // a value the softmax does not read: the step stays a kernel
  fold_pointwise_steps(other, start);
  EXPECT_EQ(other.size(), 2u);
  std::vector<ThenStep> unknown = chain(5);  // without the problem's forward count no operand can be placed
  fold_pointwise_steps(unknown);
  EXPECT_EQ(unknown.size(), 2u);
  // A third step that reads the softmax's result again: folding the add would lose it.
  std::vector<ThenStep> later = chain(5);
  later[1].bytes = 1024;
  later.push_back({.seed = matched_plan<kPointwiseRoute>(add), .shape = {4, 64}, .bytes = 0,
                   .extra_reads = {ExtraRead{.node = 7}}, .previous = 8, .stored = 9, .read = 9});
  fold_pointwise_steps(later, start);
  EXPECT_EQ(later.size(), 3u);
}

namespace {

// A chain searched with a stand-in for the route table: it seeds relu, sigmoid and add alone (each a pointwise plan
// of no interest here) and relu then sigmoid together, nothing else.
Result<std::shared_ptr<const MatchedPlan>> xr_stand_in_table(const OpGraph& g) {
  std::multiset<std::string> ops;
  for (int id : reachable(g))
    if (!is_leaf(g.node(id).op.op())) ops.insert(g.node(id).op.spelling());
  const std::vector<std::multiset<std::string>> seeded = {{"relu"}, {"sigmoid"}, {"add"}, {"relu", "sigmoid"}};
  if (std::find(seeded.begin(), seeded.end(), ops) == seeded.end()) return Error{"not seeded by the stand-in"};
  return std::shared_ptr<const MatchedPlan>(
      matched_plan<kPointwiseRoute>(PointwisePlan{.dtype = "float32", .pattern = fmt::format("{}", *ops.begin())}));
}

}  // namespace

TEST(ChainExtraReads, AComputedValueReadAgainMustBeOneAnEarlierStepStores) {
  // sigmoid(relu(y)) + relu(y): the add reads relu(y) again, which only a step that ends there stores.
  const json j = graph({input(0, "y", {8, 16}), node(1, "relu", {ref(0)}, json::object(), {8, 16}),
                        node(2, "sigmoid", {ref(1)}, json::object(), {8, 16}),
                        node(3, "add", {ref(2), ref(1)}, {{"alpha", 1}}, {8, 16})},
                       3, 1);
  const OpGraph g = xr_parsed(j);
  // Two steps would be relu-then-sigmoid and the add, but relu(y) would be no stored value: the search cuts there.
  EXPECT_FALSE(steps_for(g, xr_stand_in_table, 2, {.input0 = 0, .num_forward = 1}));
  auto steps = steps_for(g, xr_stand_in_table, 3, {.input0 = 0, .num_forward = 1});
  ASSERT_TRUE(steps);
  ASSERT_EQ(steps->size(), 3u);  // relu, sigmoid, then the add reading relu's stored result
  EXPECT_EQ((*steps)[0].stored, 1);
  ASSERT_EQ((*steps)[2].extra_reads.size(), 1u);
  EXPECT_EQ((*steps)[2].extra_reads[0].node, 1);
  ASSERT_TRUE(resolve_extra_reads(g, 0, 0, *steps).ok());
  EXPECT_EQ((*steps)[2].extra_reads[0].value, 1);  // step 1's result
  // A value no part keeps is refused when the reads are resolved, naming it.
  std::vector<ThenStep> lost = *steps;
  lost[0].stored = lost[0].read = 2;
  auto refused = resolve_extra_reads(g, 0, 0, lost);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "step 3 reads relu1 again, which no part of the chain before it keeps");
}

TEST(ChainExtraReads, NearMissesSayWhy) {
  // 92 with the residual reading the convolution before its fused relu: the rest reads two of the head's values.
  json two = xr_conv_norm_residual_lse(/*relu=*/true);
  EXPECT_TRUE(match(two).reason.starts_with("the ops after the convolution's pointwise epilogue read 2 of its values"))
      << match(two).reason;
  // 51 with a Python number in the residual: the chain passes its steps tensors.
  json scalar = xr_linear_mean_residual();
  scalar["nodes"].push_back({{"id", 12}, {"name", "s"}, {"op", "input"}, {"index", 1}, {"scalar", true},
                             {"dtype", "float64"}});
  scalar["nodes"].push_back(node(13, "mul", {ref(11), ref(12)}, json::object(), {64, 96}));
  scalar["outputs"] = {ref(13)};
  scalar["num_inputs"] = 2;
  for (int p : {3, 4, 6}) scalar["nodes"][p]["index"] = scalar["nodes"][p]["index"].get<int>() + 1;
  const auto s = match(scalar);
  EXPECT_FALSE(s.matched());
  EXPECT_TRUE(contains(s.reason, "the ops after the matrix product read forward input s too")) << s.reason;
}

// The chained files through the compile stage as the judge runs it, and their workspace queries on the host: x
// passed to a step after a folded GEMV, y kept for a step after the softmax, and y read by the norm's store.
TEST(SeedCompile, ChainsWithExtraReadsBuildAndSizeTheirWorkspace) {
  CUTEGEN_SLOW_COMPILE_TEST("a folded GEMV and two library convolutions with their steps, minutes of nvcc");
  {
    auto m = match(xr_linear_mean_residual());
    ASSERT_TRUE(m.plan_as<GemmThenPlan>()) << m.reason;
    auto src = m.plan->emit(CommentText("linear_mean_residual.py"));
    ASSERT_TRUE(src.ok()) << src.error().message;
    BuiltSeed seed;
    ASSERT_TRUE(build_and_load(*src, "chain_extra_input0.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
    const cutegen_tensor in[4] = {fp32({64, 96}), fp32({80}), fp32({80, 96}), fp32({80})};
    const cutegen_tensor out = fp32({64, 96});
    EXPECT_GE(seed.workspace_bytes(in, 4, &out, 1), size_t{256} + 8 * 96);  // y and the GEMV's folded weight
    const cutegen_tensor other = fp32({32, 96});
    EXPECT_EQ(seed.workspace_bytes(in, 4, &other, 1), 0u);  // the intermediates are sized for the trace
#endif
  }
  for (const json& g : {xr_conv_norm_softmax_residual(), xr_conv_norm_residual_lse()}) {
    auto m = match(g);
    ASSERT_TRUE(m.plan_as<ConvThenPlan>()) << m.reason;
    auto src = m.plan->emit(CommentText("conv_norm_residual.py"));
    ASSERT_TRUE(src.ok()) << src.error().message;
    BuiltSeed seed;
    ASSERT_TRUE(build_and_load(*src, "chain_extra_value.cu", seed));
#ifdef CUTEGEN_CUDA_LIB_DIR
    const cutegen_tensor in[5] = {fp32(kXrIn), fp32({8, 3, 3, 3}), fp32({8}), fp32({8}), fp32({8})};
    const cutegen_tensor out = fp32(g["nodes"][g["outputs"][0]["ref"].get<int>()]["shape"].get<std::vector<int64_t>>());
    const XrFileLayout f = xr_file_layout(*src);
    EXPECT_GE(seed.workspace_bytes(in, 5, &out, 1), static_cast<size_t>(f.intermediates));
#endif
  }
}
