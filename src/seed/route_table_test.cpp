// The route table: every row complete and named once, and the walk's rules (route.h: Claim) on graphs where
// they decide which route answers. Every problem of the repository is held to today's seeds by the golden
// test (scripts/seed_golden.py); these are the rules in small.
#include "seed/route_table.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "seed/testdata/graph_builders.h"

using namespace cutegen::seed;
using namespace cutegen::seed::testing;

namespace {

TEST(RouteTable, EveryRowHasANameAClaimAndAMatcherAndNoNameTwice) {
  std::set<std::string> names;
  for (const Route& r : route_table()) {
    SCOPED_TRACE(std::string(r.name));
    EXPECT_FALSE(r.name.empty());
    EXPECT_EQ(r.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << "a folder's name";
    EXPECT_NE(r.claim, nullptr);
    EXPECT_NE(r.match, nullptr);
    EXPECT_TRUE(names.insert(std::string(r.name)).second) << "named twice";
  }
  EXPECT_GE(names.size(), 13u);
}

TEST(RouteTable, ThePointwiseRouteIsTriedFirstOnEveryGraph) {
  const auto table = route_table();
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(table.front().name, "pointwise");
  auto g = OpGraph::from_json(graph({input(0, "x", {4, 8}), node(1, "softmax", {ref(0)}, {{"dim", -1}}, {4, 8})}, 1, 1));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(table.front().claim(match_context(*g)), Claim::attempt);
}

TEST(RouteTable, AMatchNamesItsRouteAndCarriesItsPlan) {
  auto relu = match(graph({input(0, "x", {4, 8}), node(1, "relu", {ref(0)}, json::object(), {4, 8})}, 1, 1));
  EXPECT_EQ(relu.route(), "pointwise");
  ASSERT_NE(relu.plan_as<PointwisePlan>(), nullptr);
  EXPECT_EQ(relu.plan_as<GemmPlan>(), nullptr);
  auto mm = match(product(64, 64, 64));
  EXPECT_EQ(mm.route(), "gemm");
  ASSERT_NE(mm.plan_as<GemmPlan>(), nullptr);
  auto linear_relu = match(graph({input(0, "x", {4, 8}), param(1, "w", 1, {6, 8}),
                                  node(2, "linear", {ref(0), ref(1)}, json::object(), {4, 6}),
                                  node(3, "relu", {ref(2)}, json::object(), {4, 6})},
                                 3, 1, {"w"}));
  EXPECT_EQ(linear_relu.route(), "gemm_epilogue") << linear_relu.reason;
}

// A softmax of a computed value is the softmax route's graph: its refusal is the answer, and the routes after
// it (the broadcast chain's, say) are not tried.
TEST(RouteTable, ADecidingClaimStopsTheWalkWithItsRefusal) {
  auto m = match(graph({input(0, "a", {4, 8}), node(1, "relu", {ref(0)}, json::object(), {4, 8}),
                        node(2, "softmax", {ref(1)}, {{"dim", -1}}, {4, 8})},
                       2, 1));
  EXPECT_FALSE(m.matched());
  EXPECT_EQ(m.reason, "softmax of a computed value (the row-softmax seed takes a forward input)");
}

// The sum of everything of a chain: the reduction route refuses (attempt), the loss route takes it.
TEST(RouteTable, AnAttemptsRefusalLetsALaterRouteTakeTheGraph) {
  auto m = match(graph({input(0, "x", {4, 8}), input(1, "y", {4, 8}),
                        node(2, "mul", {ref(0), ref(1)}, json::object(), {4, 8}),
                        node(3, "sum", {ref(2)}, {{"dim", nullptr}, {"keepdim", false}, {"dtype", nullptr}}, {})},
                       3, 2));
  EXPECT_EQ(m.route(), "loss") << m.reason;
}

// A mean over one dimension of a computed value: the loss route is the last resort and refuses too; the
// reduction's refusal is the one that explains.
TEST(RouteTable, ALastResortsRefusalLeavesTheEarlierReason) {
  auto m = match(graph({input(0, "x", {4, 8}), node(1, "relu", {ref(0)}, json::object(), {4, 8}),
                        node(2, "mean", {ref(1)}, {{"dim", 1}, {"keepdim", false}, {"dtype", nullptr}}, {4})},
                       2, 1));
  EXPECT_FALSE(m.matched());
  EXPECT_EQ(m.reason, "the reduced tensor is computed (relu), not a forward input (a fused prologue is future work)");
}

// Shapes the pointwise route refuses for broadcasting are the broadcast route's (no unsqueeze needed).
TEST(RouteTable, APointwiseRefusalForShapesIsTheBroadcastRoutesClaim) {
  auto m = match(graph({input(0, "x", {4, 8}), input(1, "y", {1, 8}),
                        node(2, "mul", {ref(0), ref(1)}, json::object(), {4, 8})},
                       2, 2));
  EXPECT_EQ(m.route(), "broadcast") << m.reason;
  auto mixed = match(graph({input(0, "x", {4, 8}), node(1, "relu", {ref(0)}, json::object(), {4, 8}, "float16"),
                            node(2, "add", {ref(0), ref(1)}, json::object(), {4, 8})},
                           2, 1));
  EXPECT_FALSE(mixed.matched()) << "a dtype refusal is no broadcast";
  EXPECT_TRUE(contains(mixed.reason, "mixed dtypes")) << mixed.reason;
}

}  // namespace
