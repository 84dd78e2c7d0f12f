// Which chains may run in passes over the batch (batch_passes.h): every op from forward input 0 on must keep
// the batch as dimension 0 and compute each image from that image alone.
#include <gtest/gtest.h>

#include "seed/routes/then/batch_passes.h"
#include "seed/testdata/graph_builders.h"

namespace cutegen::seed {
namespace {

using namespace testing;

const std::vector<int64_t> kX = {16, 8, 10, 12};

// x -> <op> -> mean over (2, 3): the op under test in the middle.
OpGraph with_middle(json middle, std::vector<int64_t> middle_shape = kX) {
  json nodes = json::array({input(0, "x", kX), std::move(middle),
                            node(2, "mean", {ref(1)}, {{"dim", {2, 3}}, {"keepdim", false}, {"dtype", nullptr}},
                                 {middle_shape[0], middle_shape[1]})});
  auto g = OpGraph::from_json(graph(nodes, 2, 1));
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? *g : OpGraph{};
}

TEST(BatchPasses, PerImageOpsMayRunInPasses) {
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "relu", {ref(0)}, json::object(), kX))), "");
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "softmax", {ref(0)}, {{"dim", 1}}, kX))), "");
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "softmax", {ref(0)}, {{"dim", -3}}, kX))), "");
  EXPECT_EQ(batch_mixing_reason(with_middle(
                node(1, "instance_norm", {ref(0)}, {{"eps", 1e-5}, {"affine", false}, {"training", true}}, kX))),
            "");
}

TEST(BatchPasses, WhatMixesTheImagesSaysSo) {
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "softmax", {ref(0)}, {{"dim", 0}}, kX))),
            "softmax over dimension 0, the batch");
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "softmax", {ref(0)}, {{"dim", -4}}, kX))),
            "softmax over dimension 0, the batch");
  EXPECT_EQ(batch_mixing_reason(with_middle(node(
                1, "batch_norm", {ref(0)}, {{"eps", 1e-5}, {"affine", false}, {"training", true}}, kX))),
            "batch_norm in training mode mixes the images (batch statistics)");
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "layer_norm", {ref(0)}, {{"normalized_ndim", 4}}, kX))),
            "layer_norm over the batch dimension too");
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "layer_norm", {ref(0)}, {{"normalized_ndim", 3}}, kX))), "");
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "Tensor.transpose", {ref(0)}, {{"dim0", 1}, {"dim1", 2}},
                                                 {16, 10, 8, 12}),
                                            {16, 10, 8, 12})),
            "Tensor.transpose may move the batch dimension");
  // A view that folds the batch into another dimension.
  EXPECT_EQ(batch_mixing_reason(with_middle(node(1, "Tensor.view", {ref(0)}, json::object(), {8, 16, 10, 12}),
                                            {8, 16, 10, 12})),
            "Tensor.view does not keep the batch (16) as its dimension 0");
}

TEST(BatchPasses, TheGraphAtAPassesBatchScalesEveryValueFromX) {
  OpGraph g = with_middle(node(1, "relu", {ref(0)}, json::object(), kX));
  OpGraph pass = graph_with_batch(g, 4);
  EXPECT_EQ(pass.node(0).type->shape, (std::vector<int64_t>{4, 8, 10, 12}));
  EXPECT_EQ(pass.node(1).type->shape, (std::vector<int64_t>{4, 8, 10, 12}));
  EXPECT_EQ(pass.node(2).type->shape, (std::vector<int64_t>{4, 8}));
}

}  // namespace
}  // namespace cutegen::seed
