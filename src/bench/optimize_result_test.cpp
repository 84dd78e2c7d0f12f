#include "bench/optimize_result.h"

#include <gtest/gtest.h>

#include "bench/summary.h"

using namespace cutegen;
using namespace cutegen::bench;

namespace {
StepRecord step(StepKind kind) {
  StepRecord s;
  s.kind = kind;
  return s;
}
}  // namespace

TEST(OptimizeResult, ACorrectRunCarriesTheBestKernelsNumbersAndItsOwnBaselines) {
  LoopResult r;
  r.problem.facts.gpu = "NVIDIA H200";
  r.problem.facts.flops = 1000;
  r.problem.facts.min_bytes = 4096;
  r.problem.baselines.eager = BaselineTime{TimeStats{.median_ms = 5.0}, ""};
  r.problem.baselines.compile = BaselineTime{std::nullopt, "BackendCompilerFailed: no"};
  r.problem.floor = Floor{.floor_ms = 0.5, .bound = "memory"};
  Evaluation best;
  best.time = CandidateTime{.stats = {.median_ms = 1.0}};
  best.baselines.eager = BaselineTime{TimeStats{.median_ms = 4.0}, ""};  // measured with the kernel: preferred
  best.floor = Floor{.floor_ms = 0.5, .bound = "memory"};
  r.best = Candidate{"// kernel", best};
  r.history = {step(StepKind::synthesis), step(StepKind::repair), step(StepKind::optimization),
               step(StepKind::optimization)};
  r.stop_reason = "plateau";
  r.syntheses = 1;
  r.llm_calls = 6;
  r.example_shown = "relu_vec.cu";
  r.seed_pattern = "relu(x)";
  r.seed_ms = 1.5;
  auto t = task_record_from(r, "/suite/problems/19_ReLU.py", BudgetSpent{.tokens = 1234, .cost_usd = 0.5});
  EXPECT_EQ(t.verdict, TaskVerdict::correct);
  EXPECT_EQ(t.name, "19_ReLU");
  EXPECT_EQ(t.best_ms, 1.0);
  EXPECT_EQ(t.eager_ms, 4.0);
  EXPECT_FALSE(t.compile_ms);
  EXPECT_EQ(t.compile_error, "BackendCompilerFailed: no");
  EXPECT_EQ(*t.speedup_eager(), 4.0);
  EXPECT_DOUBLE_EQ(*t.sol_pct, 50.0);
  EXPECT_EQ(t.floor_ms, 0.5);
  EXPECT_EQ(t.steps, 2);
  EXPECT_EQ(t.llm_calls, 6);
  EXPECT_EQ(t.tokens, 1234);
  EXPECT_EQ(t.cost_usd, 0.5);
  EXPECT_EQ(t.example, "relu_vec.cu");
  EXPECT_EQ(t.seed, "relu(x)");  // the seed alone took 1.5 ms, the final best 1.0
  EXPECT_EQ(t.seed_ms, 1.5);
  auto back = TaskRecord::from_json(t.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->seed, "relu(x)");
  EXPECT_EQ(back->seed_ms, 1.5);
  EXPECT_EQ(t.device, "NVIDIA H200");
  EXPECT_EQ(t.stop_reason, "plateau");
}

TEST(OptimizeResult, NoBestIsNoCorrectKernelWithTheProblemsBaselines) {
  LoopResult r;
  r.problem.baselines.eager = BaselineTime{TimeStats{.median_ms = 5.0}, ""};
  r.stop_reason = "budget";
  r.stop_detail = "task budget of $1.00 spent";
  auto t = task_record_from(r, "p.py", {});
  EXPECT_EQ(t.verdict, TaskVerdict::no_correct_kernel);
  EXPECT_EQ(t.eager_ms, 5.0);
  EXPECT_FALSE(t.best_ms);
  EXPECT_EQ(t.detail, "task budget of $1.00 spent");
}

// Without an LLM a seed that fails the judge ends the run (seed_failed); the suite's line for the task
// says how it failed, not only what the seed computes.
TEST(OptimizeResult, AFailedSeedsDetailSaysWhyItFailed) {
  LoopResult r;
  r.stop_reason = "seed_failed";
  r.stop_detail = "cumprod(x, dim=1)";
  r.seed_pattern = "cumprod(x, dim=1)";
  r.failed_seed = Evaluation{.verdict = Verdict::mismatch, .reason = "trial 3 (scaled inputs) failed: mismatch"};
  auto t = task_record_from(r, "/suite/problems/90_cumprod.py", {});
  EXPECT_EQ(t.verdict, TaskVerdict::no_correct_kernel);
  EXPECT_EQ(t.stop_reason, "seed_failed");
  const std::string why =
      "the seed kernel for y = cumprod(x, dim=1) failed the judge: mismatch: trial 3 (scaled inputs) failed: mismatch";
  EXPECT_EQ(t.detail, why);
  std::string md = render_markdown(summarize("optimize", "none:seed", {t}));
  EXPECT_NE(md.find("- 90_cumprod (no_correct_kernel): " + why + "\n"), std::string::npos) << md;
  // Another stop keeps its own detail.
  r.stop_reason = "seed";
  EXPECT_EQ(task_record_from(r, "p.py", {}).detail, "cumprod(x, dim=1)");
}

TEST(OptimizeResult, AnErrorIsAProblemErrorOnlyWhenTheProblemFileIsAtFault) {
  auto bad = task_record_from(Error{"p.py: get_inputs() is missing\nmore", ErrorKind::problem_file}, "p.py", {});
  EXPECT_EQ(bad.verdict, TaskVerdict::problem_error);
  EXPECT_EQ(bad.detail, "p.py: get_inputs() is missing");
  auto gone = task_record_from(Error{"reference worker is gone (EOF)"}, "p.py", {});
  EXPECT_EQ(gone.verdict, TaskVerdict::crashed);
}
