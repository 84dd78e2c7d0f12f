#include "runlog/attempt_label.h"

#include <gtest/gtest.h>

using namespace cutegen;

TEST(AttemptLabel, EveryLabelTheLoopWritesReadsBack) {
  const AttemptLabel labels[] = {
      {.stage = AttemptStage::seed},
      {.stage = AttemptStage::synthesis},
      {.stage = AttemptStage::synthesis, .repair = 2},
      {.stage = AttemptStage::restart, .repair = 1},
      {.stage = AttemptStage::step, .step = 3},
      {.stage = AttemptStage::step, .step = 12, .repair = 4},
      {.stage = AttemptStage::step, .step = 3, .candidate = 2},
      {.stage = AttemptStage::step, .step = 3, .candidate = 2, .repair = 1},
      {.stage = AttemptStage::tune, .step = 0},
      {.stage = AttemptStage::tune, .step = 7},
  };
  for (const auto& l : labels) {
    auto back = AttemptLabel::parse(l.text());
    ASSERT_TRUE(back) << l.text();
    EXPECT_EQ(*back, l) << l.text();
  }
  EXPECT_EQ((AttemptLabel{.stage = AttemptStage::step, .step = 3, .candidate = 2, .repair = 1}).text(), "step3-c2-repair1");
  EXPECT_EQ((AttemptLabel{.stage = AttemptStage::synthesis, .repair = 1}).text(), "synthesis-repair1");
}

TEST(AttemptLabel, AnythingElseIsNotALabel) {
  for (const char* text : {"", "step", "stepx", "step3-", "step3-repair", "step3-c", "tune", "tune3-repair1",
                           "seed-repair1", "synthesis2", "restart-c1", "eval", "step-1", "step3-repair1x"})
    EXPECT_FALSE(AttemptLabel::parse(text)) << text;
}
