#include "report/run_report.h"

#include <gtest/gtest.h>

using namespace cutegen;

namespace {

Evaluation passing(double median_ms) {
  Evaluation e;
  e.time = CandidateTime{.stats = {.median_ms = median_ms, .iqr_ms = 0.01}};
  e.baselines.eager = BaselineTime{TimeStats{.median_ms = 3.07}, ""};
  e.floor = Floor{.floor_ms = 3.04, .bound = "memory"};
  return e;
}

}  // namespace

TEST(RunReport, ShowsBaselinesStepsAndTheBest) {
  RunSummary s;
  s.problem_name = "relu";
  s.workload_class = WorkloadClass::elementwise;
  s.baselines.eager = BaselineTime{TimeStats{.median_ms = 3.07}, ""};
  s.baselines.compile = BaselineTime{std::nullopt, "torch.compile failed: no triton\nTraceback ..."};
  s.floor = Floor{.floor_ms = 3.04, .bound = "memory"};
  s.example_shown = "attacks/honest/relu_vec.cu";
  s.stop_reason = "plateau";
  s.history.push_back({.n = 1, .idea = "128-bit loads", .outcome = StepOutcome::accepted, .time_ms = 3.1, .speedup = 1.2});
  s.history.push_back({.n = 2, .idea = "smaller blocks", .outcome = StepOutcome::slower, .note = "rolled back"});
  s.history.push_back({.n = 3, .idea = "split rows", .outcome = StepOutcome::undone, .verdict = Verdict::mismatch,
                       .note = "trial 2 failed", .evidence = "output 0: 12 of 64 elements bad"});
  s.best = passing(3.1);
  std::string r = render_run_report(s);
  EXPECT_EQ(r.find("Verified at"), std::string::npos) << "a record from before the generalization trials says nothing";
  s.best->generalization = Generalization{
      .asked = 2,
      .varied = {"batch_size", "dim"},
      .verified = {VerifiedShape{.config = {{"batch_size", 4096}, {"dim", 65536}}},
                   VerifiedShape{.config = {{"batch_size", 4105}, {"dim", 65536}}}}};
  r = render_run_report(s);
  EXPECT_NE(r.find("Verified at 2 shapes of the problem: the problem's own; batch_size=4105."), std::string::npos) << r;
  EXPECT_NE(r.find("| eager PyTorch | 3.0700 ms |"), std::string::npos) << r;
  EXPECT_NE(r.find("| torch.compile | unavailable: torch.compile failed: no triton |"), std::string::npos) << r;
  EXPECT_NE(r.find("| 1 | 128-bit loads | accepted | 3.1000 ms |  |"), std::string::npos) << r;
  EXPECT_NE(r.find("| 2 | smaller blocks | slower | - | rolled back |"), std::string::npos) << r;
  EXPECT_NE(r.find("| 3 | split rows | undone (mismatch) | - | trial 2 failed; evidence: output 0: 12 of 64 elements bad |"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("98.1% of the roofline floor"), std::string::npos) << r;
  EXPECT_NE(r.find("Speedup over eager: 0.99x"), std::string::npos) << r;
  EXPECT_NE(r.find("plateau"), std::string::npos);
  EXPECT_NE(r.find("Example kernel shown to the LLM (as a reference for idioms): `attacks/honest/relu_vec.cu`"),
            std::string::npos)
      << r;
}

TEST(RunReport, SaysWhenNothingCorrectWasFound) {
  RunSummary s;
  s.problem_name = "softmax";
  s.stop_reason = "no_correct_kernel";
  std::string r = render_run_report(s);
  EXPECT_NE(r.find("No correct kernel was found."), std::string::npos);
  EXPECT_NE(r.find("no correct kernel after every synthesis attempt"), std::string::npos);
}

TEST(RunReport, ADeclineSaysWhyTheRunStopped) {
  RunSummary s;
  s.problem_name = "relu";
  s.stop_reason = "declined";
  s.stop_detail = "every byte moves once at 96% of the floor";
  s.history.push_back({.n = 1, .outcome = StepOutcome::declined, .note = s.stop_detail});
  s.best = passing(3.1);
  std::string r = render_run_report(s);
  EXPECT_NE(r.find("Stopped: the LLM proposed no further change (NO_FURTHER_CHANGE): \"every byte moves once at 96% of "
                   "the floor\"."),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("| 1 |  | declined | - | every byte moves once at 96% of the floor |"), std::string::npos) << r;
}

TEST(RunReport, SaysWhenTheRunWasTheSeedOrStartedFromIt) {
  RunSummary s;
  s.problem_name = "swish";
  s.stop_reason = "seed";
  s.stop_detail = "mul(x, sigmoid(x))";
  s.llm = "none";
  s.best = passing(3.1);
  std::string r = render_run_report(s);
  EXPECT_NE(r.find("Stopped: no LLM: the seed kernel for y = mul(x, sigmoid(x)) was judged (docs/seed.md); give --llm "
                   "to optimise further."),
            std::string::npos)
      << r;
  s.stop_reason = "steps";
  s.seed_pattern = "mul(x, sigmoid(x))";
  r = render_run_report(s);
  EXPECT_NE(r.find("The first kernel was cutegen's seed for y = mul(x, sigmoid(x)) (written without an LLM"),
            std::string::npos)
      << r;
}

TEST(RunReport, AFailedSeedSaysHowItFailed) {
  RunSummary s;
  s.problem_name = "90_cumprod";
  s.stop_reason = "seed_failed";
  s.stop_detail = "cumprod(x, dim=1)";
  s.llm = "none";
  s.failed_seed = Evaluation{.verdict = Verdict::mismatch, .reason = "trial 3 (scaled inputs) failed: mismatch"};
  std::string r = render_run_report(s);
  const std::string stopped =
      "Stopped: no LLM: the seed kernel for y = cumprod(x, dim=1) failed the judge: mismatch: trial 3 (scaled inputs) "
      "failed: mismatch (a cutegen bug: please report it); give --llm to have an LLM write the kernel.\n";
  EXPECT_NE(r.find(stopped), std::string::npos) << r;
}

TEST(RunReport, ATuningRowNamesTheStepItFollowed) {
  RunSummary s;
  s.problem_name = "relu";
  s.stop_reason = "steps";
  s.history.push_back({.kind = StepKind::tuning, .n = 1, .idea = "tuned the knobs (24 variants)",
                       .outcome = StepOutcome::accepted, .time_ms = 2.9, .note = "chose EW_THREADS=512"});
  std::string r = render_run_report(s);
  EXPECT_NE(r.find("| tuning after 1 | tuned the knobs (24 variants) | accepted | 2.9000 ms | chose EW_THREADS=512 |"),
            std::string::npos)
      << r;
}
