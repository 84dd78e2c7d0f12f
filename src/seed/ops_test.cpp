// The op vocabulary: every Op has one spelling and reads back from it; other spellings are Op::other.
#include "seed/ops.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

using namespace cutegen::seed;

TEST(Ops, EverySpellingReadsBackAsItsOp) {
  std::set<std::string> spellings;
  for (int i = static_cast<int>(Op::input); i <= static_cast<int>(Op::unsqueeze); ++i) {
    const Op op = static_cast<Op>(i);
    const std::string spelling(op_spelling(op));
    SCOPED_TRACE(spelling);
    EXPECT_FALSE(spelling.empty()) << "Op " << i << " has no spelling in ops.cpp";
    EXPECT_EQ(op_named(spelling), op);
    EXPECT_TRUE(spellings.insert(spelling).second);
  }
}

TEST(Ops, OtherSpellingsAreOther) {
  EXPECT_EQ(op_named("relu"), Op::other);  // a pointwise op: its formula table is its vocabulary
  EXPECT_EQ(op_named("torch.matmul"), Op::other);
  EXPECT_EQ(op_named(""), Op::other);
  EXPECT_EQ(op_spelling(Op::other), "");
}

TEST(Ops, AnOpNameKeepsItsSpellingAndComparesAsItsOp) {
  OpName mm("matmul");
  EXPECT_TRUE(mm == Op::matmul);
  EXPECT_FALSE(mm == Op::linear);
  EXPECT_EQ(mm.spelling(), "matmul");
  OpName chunk("torch.chunk");
  EXPECT_EQ(chunk.op(), Op::other);
  EXPECT_EQ(fmt::format("{}", chunk), "torch.chunk");
  EXPECT_EQ(OpName(Op::identity).spelling(), "identity");
}

TEST(Ops, FamiliesAreTheMatchersTriggers) {
  for (Op op : {Op::sum, Op::mean, Op::prod, Op::max, Op::min, Op::amax, Op::amin, Op::argmax, Op::argmin})
    EXPECT_TRUE(is_reduction(op));
  EXPECT_FALSE(is_reduction(Op::logsumexp));
  for (Op op : {Op::layer_norm, Op::group_norm, Op::instance_norm, Op::batch_norm}) EXPECT_TRUE(is_norm_module(op));
  EXPECT_FALSE(is_norm_module(Op::norm));
  for (Op op : {Op::mse_loss, Op::l1_loss, Op::smooth_l1_loss, Op::huber_loss, Op::kl_div}) EXPECT_TRUE(is_loss_function(op));
  EXPECT_FALSE(is_loss_function(Op::cross_entropy));
  for (Op op : {Op::input, Op::param, Op::constant}) EXPECT_TRUE(is_leaf(op));
}
