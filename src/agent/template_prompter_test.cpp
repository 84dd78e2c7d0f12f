// The real prompt files rendered from the loop's data: what the LLM is actually sent.
#include "agent/template_prompter.h"
#include "run/judge.h"

#include <gtest/gtest.h>

using namespace cutegen;

namespace {

ProblemInfo linear_problem() {
  ProblemInfo p;
  p.name = "linear_relu";
  p.source = "class Model(nn.Module): ...";
  p.workload_class = "gemm";
  p.metadata = nlohmann::json::parse(R"({
    "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [128, 256]},
               {"name": "alpha", "kind": "scalar", "dtype": "float64", "value": 0.5}],
    "params": [{"name": "fc.weight", "kind": "tensor", "dtype": "float32", "shape": [64, 256], "buffer": false},
               {"name": "running", "kind": "tensor", "dtype": "float32", "shape": [64], "buffer": true}],
    "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [128, 64]}],
    "gpu": "NVIDIA H200", "min_bytes": 1000000, "flops": 4194304})");
  p.eager_ms = 0.05;
  p.compile_ms = 0.04;
  p.floor_ms = 0.01;
  p.bound = "memory";
  return p;
}

}  // namespace

TEST(TemplatePrompter, ProblemBriefKeepsTheContractOrderAndRoles) {
  auto b = problem_brief(linear_problem(), "strict");
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_EQ(b->inputs.size(), 4u);
  EXPECT_EQ(b->inputs[0].role, TensorRole::forward_input);
  EXPECT_EQ(b->inputs[1].role, TensorRole::host_scalar);
  EXPECT_EQ(b->inputs[1].value, "0.5");
  EXPECT_EQ(b->inputs[2].role, TensorRole::parameter);
  EXPECT_EQ(b->inputs[3].role, TensorRole::buffer);
  EXPECT_EQ(b->outputs.at(0).shape, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(b->workload, WorkloadClass::gemm);
  auto bad = linear_problem();
  bad.workload_class = "quantum";
  EXPECT_FALSE(problem_brief(bad, "strict").ok());
}

TEST(TemplatePrompter, EveryPromptRendersFromTheRepositoryFiles) {
  auto prompter = TemplatePrompter::create("strict");
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  auto& p = **prompter;
  auto problem = linear_problem();
  auto system = p.system_prompt();
  ASSERT_TRUE(system.ok()) << system.error().message;
  EXPECT_NE(system->find("cutegen_forward"), std::string::npos);

  auto synthesis = p.synthesis(problem);
  ASSERT_TRUE(synthesis.ok()) << synthesis.error().message;
  EXPECT_NE(synthesis->find("(128, 256)"), std::string::npos);
  EXPECT_NE(synthesis->find("gemm_tiled.cu"), std::string::npos);  // the GEMM example kernel

  Evaluation failed;
  failed.verdict = "mismatch";
  failed.reason = "trial 4 (signed inputs) failed: mismatch";
  failed.evidence = "max_abs_err 0.31 at [0, 17]";
  RepairContext context{"3xTF32 MMA", {LoopStep{1, "fix the k-loop bound", "nondeterministic", std::nullopt, "", {}}}};
  auto diagnose = p.diagnose(problem, "int x;\n", failed, context);
  ASSERT_TRUE(diagnose.ok()) << diagnose.error().message;
  EXPECT_NE(diagnose->find("max_abs_err 0.31"), std::string::npos);
  EXPECT_NE(diagnose->find("3xTF32 MMA"), std::string::npos);
  EXPECT_NE(diagnose->find("fix the k-loop bound"), std::string::npos);

  auto repair = p.repair(problem, "int x;\n", failed, "DIAGNOSIS: wrong bound\nFIX: use K", context);
  ASSERT_TRUE(repair.ok()) << repair.error().message;
  EXPECT_NE(repair->find("wrong bound"), std::string::npos);

  Evaluation best;
  best.passed = true;
  best.median_ms = 0.02;
  std::vector<LoopStep> history = {LoopStep{1, "smem tiles", "accepted", 0.02, "1.5x", 1.5},
                                   LoopStep{2, "split-k", "slower", 0.03, "rolled back", 0.66}};
  auto optimize = p.optimize(problem, "int x;\n", best, history, "memory-bound: dram 91%", 3, 8);
  ASSERT_TRUE(optimize.ok()) << optimize.error().message;
  EXPECT_NE(optimize->find("split-k"), std::string::npos);
  EXPECT_NE(optimize->find("memory-bound: dram 91%"), std::string::npos);

  Evaluation sank;
  sank.verdict = "cuda_error";
  sank.reason = "CUDA error while running the kernel: cudaErrorIllegalAddress";
  auto restart = p.restart(problem, {{"attempt 1: no usable kernel in the answer: no code block", std::nullopt},
                                     {"attempt 2: cuda_error after 4 repair rounds: illegal address", sank}});
  ASSERT_TRUE(restart.ok()) << restart.error().message;
  EXPECT_NE(restart->find("cuda_error after 4 repair rounds"), std::string::npos);
  // Each attempt is labelled by how it ended, and the last one's evidence is quoted.
  EXPECT_NE(restart->find("synthesis attempt 1 -> answer unusable"), std::string::npos) << *restart;
  EXPECT_NE(restart->find("synthesis attempt 2 -> runtime failure"), std::string::npos) << *restart;
  EXPECT_EQ(restart->find("wrong result"), std::string::npos) << *restart;
  EXPECT_NE(restart->find("cudaErrorIllegalAddress"), std::string::npos) << *restart;
  EXPECT_EQ(restart->find("None recorded."), std::string::npos) << *restart;
}

TEST(TemplatePrompter, StepOutcomesMapOntoThePromptStagesWords) {
  EXPECT_EQ(step_record(LoopStep{1, "a", "accepted", 1.0, "", 1.2}).outcome, StepOutcome::improved);
  EXPECT_EQ(step_record(LoopStep{1, "a", "slower", 1.0, "", 0.9}).outcome, StepOutcome::not_faster);
  EXPECT_EQ(step_record(LoopStep{1, "a", "unusable_edit", {}, "", {}}).outcome, StepOutcome::bad_answer);
  EXPECT_EQ(step_record(LoopStep{1, "a", "compile_error", {}, "", {}}).outcome, StepOutcome::compile_error);
  EXPECT_EQ(step_record(LoopStep{1, "a", "unwritten", {}, "", {}}).outcome, StepOutcome::wrong_result);
  // The same verdict table as failure_evidence: a result reused across calls is a wrong result.
  EXPECT_EQ(step_record(LoopStep{1, "a", "result_reuse", {}, "", {}}).outcome, StepOutcome::wrong_result);
  EXPECT_EQ(step_record(LoopStep{1, "a", "printed_output", {}, "", {}}).outcome, StepOutcome::runtime_error);
  EXPECT_EQ(failure_evidence(Evaluation{.verdict = "timeout"})->kind, FailureKind::runtime_error);
  EXPECT_EQ(failure_evidence(Evaluation{.verdict = "result_reuse"})->kind, FailureKind::wrong_result);
  EXPECT_FALSE(failure_evidence(Evaluation{.verdict = "no_such_verdict"}).ok());
}

// Every failing verdict the judge can give must be one the prompts know how to describe.
TEST(TemplatePrompter, EveryJudgeVerdictHasAFailureKind) {
  for (int v = static_cast<int>(Verdict::compile_error); v <= static_cast<int>(Verdict::result_reuse); ++v) {
    std::string word = to_string(static_cast<Verdict>(v));
    EXPECT_TRUE(failure_kind_for_verdict(word).ok()) << word;
  }
}
