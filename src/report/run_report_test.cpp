#include "report/run_report.h"

#include <gtest/gtest.h>

using namespace cutegen;

TEST(RunReport, ShowsBaselinesStepsAndTheBest) {
  RunSummary s;
  s.problem_name = "relu";
  s.workload_class = "elementwise";
  s.eager_ms = 3.07;
  s.floor_ms = 3.04;
  s.bound = "memory";
  s.stop_reason = "plateau";
  s.history.push_back({{"step", 1}, {"idea", "128-bit loads"}, {"outcome", "accepted"}, {"time_ms", 3.1}, {"note", "1.2x"}});
  s.history.push_back({{"step", 2}, {"idea", "smaller blocks"}, {"outcome", "slower"}, {"note", "rolled back"}});
  s.best = nlohmann::json{{"median_ms", 3.1}, {"iqr_ms", 0.01}, {"speedup_eager", 0.99}, {"sol_pct", 98.1}};
  std::string r = render_run_report(s);
  EXPECT_NE(r.find("| eager PyTorch | 3.0700 ms |"), std::string::npos) << r;
  EXPECT_NE(r.find("| torch.compile | n/a |"), std::string::npos);
  EXPECT_NE(r.find("| 1 | 128-bit loads | accepted | 3.1000 ms | 1.2x |"), std::string::npos);
  EXPECT_NE(r.find("| 2 | smaller blocks | slower | - | rolled back |"), std::string::npos);
  EXPECT_NE(r.find("98.1% of the roofline floor"), std::string::npos);
  EXPECT_NE(r.find("plateau"), std::string::npos);
}

TEST(RunReport, SaysWhenNothingCorrectWasFound) {
  RunSummary s;
  s.problem_name = "softmax";
  s.stop_reason = "no_correct_kernel";
  std::string r = render_run_report(s);
  EXPECT_NE(r.find("No correct kernel was found."), std::string::npos);
  EXPECT_NE(r.find("no correct kernel after every synthesis attempt"), std::string::npos);
}
