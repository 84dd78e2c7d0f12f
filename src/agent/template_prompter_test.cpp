// The real prompt files rendered from the loop's data: what the LLM is actually sent.
#include "agent/template_prompter.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {

ProblemInfo linear_problem() {
  ProblemInfo p;
  p.source = "class Model(nn.Module): ...";
  p.facts = *ProblemFacts::from_json(nlohmann::json::parse(R"({"name": "linear_relu", "workload_class": "gemm",
    "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [128, 256]},
               {"name": "alpha", "kind": "scalar", "dtype": "float64", "value": 0.5}],
    "params": [{"name": "fc.weight", "kind": "tensor", "dtype": "float32", "shape": [64, 256], "buffer": false},
               {"name": "running", "kind": "tensor", "dtype": "float32", "shape": [64], "buffer": true}],
    "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [128, 64]}],
    "gpu": "NVIDIA H200", "min_bytes": 1000000, "flops": 4194304})"));
  p.baselines.eager = BaselineTime{TimeStats{.median_ms = 0.05}, ""};
  p.baselines.compile = BaselineTime{TimeStats{.median_ms = 0.04}, ""};
  p.floor = Floor{.floor_ms = 0.01, .bound = "memory"};
  return p;
}

// problems/layernorm.py as the judge describes it: an init input, parameters and a buffer.
ProblemInfo layernorm_problem() {
  ProblemInfo p;
  p.source = *read_file(std::string(CUTEGEN_SOURCE_DIR) + "/problems/layernorm.py");
  p.facts = *ProblemFacts::from_json(nlohmann::json::parse(R"({"name": "layernorm", "workload_class": "reduction",
    "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [4096, 8192]}],
    "params": [{"name": "norm.weight", "kind": "tensor", "dtype": "float32", "shape": [8192], "buffer": false},
               {"name": "norm.bias", "kind": "tensor", "dtype": "float32", "shape": [8192], "buffer": false},
               {"name": "gain", "kind": "tensor", "dtype": "float32", "shape": [8192], "buffer": true}],
    "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [4096, 8192]}],
    "init_inputs": [{"name": "hidden", "kind": "scalar", "dtype": "int64", "value": 8192}],
    "aten_ops": ["aten::native_layer_norm", "aten::mul"],
    "gpu": "NVIDIA H200", "min_bytes": 268533760, "flops": 100663296})"));
  p.baselines.eager = BaselineTime{TimeStats{.median_ms = 0.2341}, ""};
  p.baselines.compile = BaselineTime{TimeStats{.median_ms = 0.1877}, ""};
  p.floor = Floor{.floor_ms = 0.0562, .bound = "memory"};
  return p;
}

Evaluation passing(double ms) {
  Evaluation e;
  e.time = CandidateTime{.stats = {.median_ms = ms}};
  return e;
}

using cutegen::testing::contains;

}  // namespace

TEST(TemplatePrompter, ProblemBriefKeepsTheContractOrderAndRoles) {
  auto b = problem_brief(linear_problem(), {.precision = Precision::strict, .arch = "sm_90a"});
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_EQ(b->inputs.size(), 4u);
  EXPECT_EQ(b->inputs[0].role, TensorRole::forward_input);
  EXPECT_EQ(b->inputs[1].role, TensorRole::host_scalar);
  EXPECT_EQ(b->inputs[1].value, "0.5");
  EXPECT_EQ(b->inputs[2].role, TensorRole::parameter);
  EXPECT_EQ(b->inputs[3].role, TensorRole::buffer);
  EXPECT_EQ(b->outputs.at(0).shape, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(b->workload, WorkloadClass::gemm);
  EXPECT_EQ(b->eager_ms, 0.05);
  EXPECT_EQ(b->floor_ms, 0.01);
  EXPECT_EQ(b->arch, "sm_90a");
  auto bad = linear_problem();
  bad.facts.params[0].kind = ValueFacts::Kind::scalar;
  EXPECT_FALSE(problem_brief(bad, {}).ok()) << "a scalar parameter cannot reach the kernel";
}

TEST(TemplatePrompter, EveryPromptRendersFromTheRepositoryFiles) {
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  auto& p = **prompter;
  auto problem = linear_problem();
  auto system = p.system_prompt(problem, PromptKind::synthesis);
  ASSERT_TRUE(system.ok()) << system.error().message;
  EXPECT_NE(system->find("cutegen_forward"), std::string::npos);
  EXPECT_NE(system->find("(128, 256)"), std::string::npos) << "the problem is in the system message";

  auto synthesis = p.synthesis(problem);
  ASSERT_TRUE(synthesis.ok()) << synthesis.error().message;
  // A strict fp32 GEMM is shown the library's 3xTF32 GEMM, and the run records that one.
  EXPECT_NE(synthesis->find("# A reference for CuTe idioms (gemm_sm90_3xtf32.cu)"), std::string::npos) << *synthesis;
  EXPECT_EQ(p.example_shown(problem), "library/gemm_sm90_3xtf32.cu");

  Evaluation failed{.verdict = Verdict::mismatch, .reason = "trial 4 (signed inputs) failed: mismatch",
                    .evidence = "max_abs_err 0.31 at [0, 17]"};
  RepairContext context{"3xTF32 MMA", {StepRecord{.kind = StepKind::repair, .n = 1, .idea = "fix the k-loop bound",
                                                  .outcome = StepOutcome::incorrect,
                                                  .verdict = Verdict::nondeterministic}}};
  auto diagnose = p.diagnose(problem, "int x;\n", failed, context);
  ASSERT_TRUE(diagnose.ok()) << diagnose.error().message;
  EXPECT_NE(diagnose->find("max_abs_err 0.31"), std::string::npos);
  EXPECT_NE(diagnose->find("3xTF32 MMA"), std::string::npos);
  EXPECT_NE(diagnose->find("repair 1: fix the k-loop bound -> wrong result (nondeterministic)"), std::string::npos)
      << *diagnose;
  // With the kernel the step was made to, the diagnosis sees the step's diff.
  context.origin = "int y;\n";
  auto with_diff = p.diagnose(problem, "int x;\n", failed, context);
  ASSERT_TRUE(with_diff.ok()) << with_diff.error().message;
  EXPECT_TRUE(contains(*with_diff, "```diff\n--- a/kernel.cu\n+++ b/kernel.cu\n@@ -1 +1 @@\n-int y;\n+int x;\n```"))
      << *with_diff;

  auto repair = p.repair(problem, "int x;\n", failed, "DIAGNOSIS: wrong bound\nFIX: use K", context);
  ASSERT_TRUE(repair.ok()) << repair.error().message;
  EXPECT_NE(repair->find("wrong bound"), std::string::npos);
  EXPECT_NE(system->find("```python\nclass Model(nn.Module): ..."), std::string::npos) << "the reference, for every call";

  std::vector<StepRecord> history = {
      {.n = 1, .idea = "smem tiles", .outcome = StepOutcome::accepted, .time_ms = 0.02, .speedup = 1.5},
      {.n = 2, .idea = "split-k", .outcome = StepOutcome::slower, .time_ms = 0.03, .speedup = 0.66}};
  auto optimize = p.optimize(problem, "int x;\n", passing(0.02), history, "memory-bound: dram 91%", 3, 8);
  ASSERT_TRUE(optimize.ok()) << optimize.error().message;
  EXPECT_NE(optimize->find("split-k"), std::string::npos);
  EXPECT_NE(optimize->find("memory-bound: dram 91%"), std::string::npos);

  Evaluation sank{.verdict = Verdict::cuda_error, .reason = "CUDA error while running the kernel: cudaErrorIllegalAddress"};
  auto restart = p.restart(problem, {{"no usable kernel in the answer: no code block", std::nullopt},
                                     {"cuda_error after 4 repair rounds: illegal address", sank}});
  ASSERT_TRUE(restart.ok()) << restart.error().message;
  EXPECT_EQ(restart->find("(cuda_error): cuda_error"), std::string::npos) << "the verdict once";
  // Each attempt is labelled by what it was and how it ended, and the last one's evidence is quoted.
  EXPECT_NE(restart->find("synthesis attempt 1 -> answer unusable"), std::string::npos) << *restart;
  EXPECT_NE(restart->find("synthesis attempt 2 -> runtime failure (cuda_error): after 4 repair rounds: illegal address"),
            std::string::npos)
      << *restart;
  EXPECT_EQ(restart->find("step 1:"), std::string::npos) << *restart;
  EXPECT_EQ(restart->find("wrong result"), std::string::npos) << *restart;
  EXPECT_NE(restart->find("cudaErrorIllegalAddress"), std::string::npos) << *restart;
  EXPECT_EQ(restart->find("None recorded."), std::string::npos) << *restart;
}

// The loop's data, through the real prompt files, for a problem with an init input, parameters and a
// buffer: what issue 12 found the prompts getting wrong, each on the rendered text.
TEST(TemplatePrompter, PromptsForLayerNormTellTheTruth) {
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  auto& p = **prompter;
  const ProblemInfo problem = layernorm_problem();
  Evaluation failed{.verdict = Verdict::mismatch, .reason = "trial 2 (signed inputs) failed: mismatch",
                    .evidence = "output 0: 8192 of 33554432 elements bad"};
  std::vector<StepRecord> history = {
      {.n = 1, .idea = "one block per row", .outcome = StepOutcome::accepted, .time_ms = 0.1124, .speedup = 1.314},
      {.n = 2, .idea = "two-pass with a combining kernel", .outcome = StepOutcome::undone, .verdict = Verdict::mismatch,
       .note = "trial 2 (signed inputs) failed: mismatch", .evidence = "output 0: 8192 of 33554432 elements bad"}};
  auto system = p.system_prompt(problem, PromptKind::optimize);
  auto synthesis = p.synthesis(problem);
  auto repair = p.repair(problem, "int x;\n", failed, "DIAGNOSIS: d\nFIX: f", {});
  auto optimize = p.optimize(problem, "int x;\n", passing(0.1124), history, "", 3, 8);
  auto restart = p.restart(problem, {{"mismatch after 4 repair rounds: trial 2 failed", failed}});
  ASSERT_TRUE(system.ok()) << system.error().message;
  // The init inputs from the worker, and the eps nn.LayerNorm(hidden) relies on, in the system message
  // (every kind's carries the problem).
  EXPECT_TRUE(contains(*system, "get_init_inputs(): [8192], so the model is Model(hidden=8192).")) << *system;
  EXPECT_FALSE(contains(*system, "get_init_inputs(): none"));
  EXPECT_TRUE(contains(*system, "nn.LayerNorm: eps=1e-05")) << *system;
  EXPECT_TRUE(contains(*system, "        self.norm = nn.LayerNorm(hidden)\n")) << *system;
  EXPECT_TRUE(contains(*system, "| inputs[3] | gain | buffer | (8192,) | float32 |")) << *system;
  for (auto* r : {&synthesis, &repair, &optimize, &restart}) ASSERT_TRUE(r->ok()) << r->error().message;
  // Each baseline once in the optimise call, and the undone step as a failed idea with its evidence.
  auto count = [](const std::string& text, const std::string& part) {
    int n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(*system + *optimize, "0.2341 ms"), 1) << *optimize;
  EXPECT_EQ(count(*system + *optimize, "0.1877 ms"), 1) << *optimize;
  EXPECT_EQ(count(*optimize, "1.31x"), 1) << *optimize;
  EXPECT_TRUE(contains(*optimize, "step 2: two-pass with a combining kernel -> broke the kernel: wrong result (mismatch); "
                                  "the repair only undid the change, so the idea failed"))
      << *optimize;
  EXPECT_TRUE(contains(*optimize, "evidence: output 0: 8192 of 33554432 elements bad")) << *optimize;
  EXPECT_TRUE(contains(*optimize, "NO_FURTHER_CHANGE")) << *optimize;
  // The example is a reference for idioms, and the one the run records.
  EXPECT_TRUE(contains(*synthesis, "# A reference for CuTe idioms (layernorm_rows_grid.cu)")) << *synthesis;
  EXPECT_EQ(p.example_shown(problem), "library/layernorm_rows_grid.cu");
  EXPECT_TRUE(contains(*restart, "synthesis attempt 1 -> wrong result (mismatch): after 4 repair rounds: trial 2 failed"))
      << *restart;
}

TEST(TemplatePrompter, ThePrecisionPolicyChoosesTheGemmShown) {
  for (auto [precision, file] : {std::pair{Precision::strict, "gemm_sm90_3xtf32.cu"},
                                 std::pair{Precision::tf32, "gemm_sm90_tf32.cu"},
                                 std::pair{Precision::bf16, "gemm_sm90_bf16.cu"}}) {
    auto prompter = TemplatePrompter::create({.precision = precision});
    ASSERT_TRUE(prompter.ok()) << prompter.error().message;
    auto synthesis = (*prompter)->synthesis(linear_problem());
    ASSERT_TRUE(synthesis.ok()) << synthesis.error().message;
    EXPECT_TRUE(contains(*synthesis, std::string("# A reference for CuTe idioms (") + file + ")")) << file;
    EXPECT_EQ((*prompter)->example_shown(linear_problem()), std::string("library/") + file);
  }
  auto none = TemplatePrompter::create({.show_example = false});
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ((*none)->example_shown(linear_problem()), "") << "--examples none records no example";
}

TEST(TemplatePrompter, FailureEvidenceCarriesTheTypedVerdict) {
  EXPECT_EQ(failure_evidence(Evaluation{.verdict = Verdict::timeout})->kind, FailureKind::runtime_error);
  EXPECT_EQ(failure_evidence(Evaluation{.verdict = Verdict::result_reuse})->kind, FailureKind::wrong_result);
  EXPECT_EQ(failure_evidence(Evaluation{.verdict = Verdict::result_reuse})->verdict, Verdict::result_reuse);
  EXPECT_FALSE(failure_evidence(Evaluation{.verdict = Verdict::pass}).ok());
}

// With --candidates, each request applies its own item: its share carries that item's full text,
// except when the step's optimize request (the same for every candidate) shows that item already.
TEST(TemplatePrompter, ACandidatesShareCarriesItsItemInFullUnlessTheRequestShowsIt) {
  auto made = TemplatePrompter::create();
  ASSERT_TRUE(made.ok()) << made.error().message;
  TemplatePrompter& p = **made;
  const ProblemInfo problem = layernorm_problem();
  const auto items = p.menu_items(problem);
  ASSERT_GE(items.size(), 4u);
  auto optimize = p.optimize(problem, "int x;\n", passing(0.1), {}, "", 2, 8);
  ASSERT_TRUE(optimize.ok()) << optimize.error().message;
  EXPECT_TRUE(contains(*optimize, "\n" + items[1].substr(0, 3) + "**")) << "step 2 shows item 2 in full:\n" << *optimize;
  auto second = p.candidate_share(problem, {.step = 2, .candidate = 1, .candidates = 2, .item = items[1],
                                            .siblings = {items[3]}});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(contains(*second, "Your item in full:\n(its full text is in this step's request above)")) << *second;
  auto fourth = p.candidate_share(problem, {.step = 2, .candidate = 2, .candidates = 2, .item = items[3],
                                            .siblings = {items[1]}});
  ASSERT_TRUE(fourth.ok()) << fourth.error().message;
  EXPECT_TRUE(contains(*fourth, "Your item in full:\n" + items[3].substr(0, 3) + "**")) << *fourth;
  EXPECT_TRUE(contains(*fourth, "- In a profile:")) << *fourth;
  EXPECT_FALSE(contains(*fourth, "- When it helps:")) << "the system message's index line says it:\n" << *fourth;
  EXPECT_FALSE(contains(*optimize, items[3].substr(0, 3) + "**")) << "one item in full per request";
}

// ptxas's serialised-wgmma note on the best kernel's build (the evaluation's compiler_notes) reaches the optimize
// request even while profiles are withheld.
TEST(TemplatePrompter, TheBestKernelsPtxasPerformanceNoteIsInTheOptimizeRequest) {
  auto made = TemplatePrompter::create();
  ASSERT_TRUE(made.ok()) << made.error().message;
  TemplatePrompter& p = **made;
  Evaluation best = passing(0.1);
  auto plain = p.optimize(layernorm_problem(), "int x;\n", best, {}, "", 2, 8);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(contains(*plain, "ptxas")) << *plain;
  best.compiler_notes = {"(C7510) Potential Performance Loss: wgmma serialized"};
  auto noted = p.optimize(layernorm_problem(), "int x;\n", best, {}, "", 2, 8);
  ASSERT_TRUE(noted.ok()) << noted.error().message;
  EXPECT_TRUE(contains(*noted, "- ptxas, building the best kernel: (C7510) Potential Performance Loss: wgmma serialized"))
      << *noted;
}
