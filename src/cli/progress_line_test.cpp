#include "cli/progress_line.h"

#include <gtest/gtest.h>

using namespace cutegen;
using cutegen::cli::ProgressLine;

TEST(ProgressLine, StatusShowsPhaseStepBestSolAndSpend) {
  LoopStatus s;
  s.phase = LoopPhase::optimize;
  s.step = 2;
  s.max_steps = 8;
  s.best_ms = 0.5692;
  s.best_speedup_eager = 0.92;
  s.best_sol_pct = 89.7;
  s.tokens = 12345;
  s.cost_usd = 0.1234;
  EXPECT_EQ(ProgressLine::status_text(s), "[optimize step 2/8] best 0.5692 ms 0.92x eager SOL 90% | 12345 tok $0.123");
  s.replaying = true;
  EXPECT_NE(ProgressLine::status_text(s).find("(replaying log)"), std::string::npos);
}

TEST(ProgressLine, BeforeAnyKernelOnlyThePhaseAndSpendShow) {
  LoopStatus s;
  s.phase = LoopPhase::synthesize;
  EXPECT_EQ(ProgressLine::status_text(s), "[synthesize] | 0 tok $0.000");
}
