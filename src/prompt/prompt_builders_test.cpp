// Renders every prompt from the repository's own prompts/ with sample data: the CI guard that the
// files and the builders agree (every placeholder filled, nothing left over), that the rules and the
// contract reach the LLM, and that the problem's facts appear where they should.
#include "prompt/prompt_builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/fs.h"

using namespace cutegen;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::filesystem::path source_root() { return CUTEGEN_SOURCE_ROOT; }

PromptPaths repo_paths() {
  return {source_root() / "prompts", source_root() / "docs" / "kernel-contract.md",
          source_root() / "examples" / "kernels"};
}

const PromptLibrary& library() {
  static const PromptLibrary lib = [] {
    auto l = PromptLibrary::load(repo_paths());
    if (!l.ok()) {
      ADD_FAILURE() << l.error().message;
      std::abort();
    }
    return std::move(*l);
  }();
  return lib;
}

ProblemBrief sample_gemm() {
  ProblemBrief p;
  p.name = "1_Square_matrix_multiplication_";
  p.reference_source =
      "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, A, B):\n"
      "        return torch.matmul(A, B)\n\nN = 4096\n\ndef get_inputs():\n    return [torch.rand(N, N), "
      "torch.rand(N, N)]\n\ndef get_init_inputs():\n    return []\n";
  p.workload = WorkloadClass::gemm;
  p.inputs = {{"A", TensorRole::forward_input, {4096, 4096}, "float32", ""},
              {"B", TensorRole::forward_input, {4096, 4096}, "float32", ""}};
  p.outputs = {{"", TensorRole::output, {4096, 4096}, "float32", ""}};
  p.gpu = "NVIDIA H200 (sm_90a)";
  p.min_bytes = 3ull * 4096 * 4096 * 4;
  p.flops = 2ull * 4096 * 4096 * 4096;
  p.floor_ms = 2.05;
  p.floor_bound = "compute";
  p.eager_ms = 2.61;
  p.compile_ms = 2.58;
  return p;
}

ProblemBrief sample_elementwise() {
  ProblemBrief p;
  p.name = "19_ReLU";
  p.reference_source = "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";
  p.workload = WorkloadClass::elementwise;
  p.inputs = {{"x", TensorRole::forward_input, {16, 16384}, "float32", ""},
              {"negative_slope", TensorRole::host_scalar, {}, "float64", "0.01"}};
  p.outputs = {{"", TensorRole::output, {16, 16384}, "float32", ""}};
  p.min_bytes = 2ull * 16 * 16384 * 4;
  p.flops = 16 * 16384;
  return p;  // no floor, no baselines: the prompt must say so rather than print blanks
}

const std::string kKernel = "#include <cutegen/kernel.h>\n#include <cute/tensor.hpp>\n// the current kernel\n";

FailureEvidence sample_failure(FailureKind kind) {
  return {kind, "mismatch", "max abs error 3.2e-02 at (17, 4), 4096 of 16777216 elements",
          "trial 1 (seed 1234): max abs err 3.2e-02, max rel err 1.1e-01\nfirst bad indices: (17,4) (17,5) (17,6)\n"};
}

std::vector<StepRecord> sample_history() {
  std::vector<StepRecord> h;
  for (int n = 1; n <= 12; ++n) {
    StepRecord s;
    s.n = n;
    s.idea = "idea number " + std::to_string(n);
    s.outcome = n == 3 ? StepOutcome::improved : StepOutcome::not_faster;
    s.time_ms = n == 3 ? 1.0 : 1.2;
    h.push_back(s);
  }
  return h;
}

// Every rendered prompt: no placeholder or template header left, the rules present.
void expect_complete(const std::string& prompt, const std::string& what) {
  EXPECT_FALSE(contains(prompt, "{{")) << what << " has an unfilled placeholder";
  EXPECT_FALSE(contains(prompt, "<!--")) << what << " still has the template header";
  EXPECT_TRUE(contains(prompt, library().rules())) << what << " lacks the rules text";
}

}  // namespace

TEST(PromptLibrary, RepositoryPromptsLoadAndMatchTheBuilders) {
  auto s = check_prompt_library(library());
  EXPECT_TRUE(s.ok()) << s.error().message;
  for (WorkloadClass c : all_workload_classes()) {
    const std::string& menu = library().menu(c);
    EXPECT_TRUE(contains(menu, "1. **")) << to_string(c) << " menu has no numbered items";
    EXPECT_TRUE(contains(menu, "When it helps:")) << to_string(c);
    EXPECT_TRUE(contains(menu, "In a profile:")) << to_string(c);
    EXPECT_TRUE(contains(library().example(c).source, "cutegen_forward")) << to_string(c);
  }
}

TEST(PromptLibrary, CuteGuideStaysConcise) {
  const std::string& guide = library().cute_guide();
  EXPECT_LE(std::count(guide.begin(), guide.end(), '\n'), 260);
  for (const char* name : {"make_tiled_copy", "SM80_CP_ASYNC_CACHEALWAYS", "cp_async_fence", "cp_async_wait",
                           "make_tiled_mma", "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_16x8x16_F32F16F16F32_TN",
                           "Swizzle<", "local_tile", "local_partition", "make_identity_tensor", "elem_less",
                           "make_tma_copy", "**named** namespace"})
    EXPECT_TRUE(contains(guide, name)) << name;
}

TEST(PromptBuild, SynthesisHasProblemShapesContractRulesAndExample) {
  auto r = build_synthesis_prompt(library(), {sample_gemm()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string& p = *r;
  expect_complete(p, "synthesis");
  EXPECT_TRUE(contains(p, library().contract()));
  EXPECT_TRUE(contains(p, library().cute_guide()));
  EXPECT_TRUE(contains(p, "| inputs[0] | A | forward() argument | (4096, 4096) | float32 |")) << p;
  EXPECT_TRUE(contains(p, "| inputs[1] | B | forward() argument | (4096, 4096) | float32 |"));
  EXPECT_TRUE(contains(p, "| outputs[0] | - | output | (4096, 4096) | float32 |"));
  EXPECT_TRUE(contains(p, "```python\nimport torch\n"));
  EXPECT_TRUE(contains(p, "return torch.matmul(A, B)"));
  EXPECT_TRUE(contains(p, "Roofline floor on this GPU: 2.05 ms (compute-bound)"));
  EXPECT_TRUE(contains(p, "PyTorch eager: 2.61 ms; torch.compile: 2.58 ms"));
  EXPECT_TRUE(contains(p, "137 GFLOP")) << "2*4096^3 FLOPs";
  EXPECT_TRUE(contains(p, "201 MB")) << "3 * 4096^2 * 4 bytes";
  EXPECT_TRUE(contains(p, "gemm_tiled.cu"));
  EXPECT_TRUE(contains(p, "```cuda\n" + library().example(WorkloadClass::gemm).source)) << "the example kernel";
  EXPECT_TRUE(contains(p, "3xTF32")) << "strict precision policy";
  EXPECT_TRUE(contains(p, "NVIDIA H200 (sm_90a)"));
}

TEST(PromptBuild, SynthesisForElementwiseUsesItsExampleAndSaysWhatIsUnknown) {
  auto r = build_synthesis_prompt(library(), {sample_elementwise()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_complete(*r, "synthesis");
  EXPECT_TRUE(contains(*r, "relu_vec.cu"));
  EXPECT_TRUE(contains(*r, library().example(WorkloadClass::elementwise).source));
  EXPECT_TRUE(contains(*r, "| inputs[1] | negative_slope | forward() scalar argument (host value) | scalar = 0.01 | float64 |"))
      << *r;
  EXPECT_TRUE(contains(*r, "Roofline floor: not available"));
  EXPECT_TRUE(contains(*r, "PyTorch eager: not measured"));
  EXPECT_TRUE(contains(*r, "GPU: unknown."));
}

TEST(PromptBuild, DiagnoseShowsNumberedKernelEvidenceAndAsksForNoCode) {
  DiagnoseInput in{sample_gemm(), kKernel, sample_failure(FailureKind::wrong_result), "", {}};
  auto r = build_diagnose_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string& p = *r;
  expect_complete(p, "diagnose");
  EXPECT_TRUE(contains(p, "      3 | // the current kernel\n")) << p;
  EXPECT_TRUE(contains(p, "wrong result (verdict `mismatch`): max abs error 3.2e-02"));
  EXPECT_TRUE(contains(p, "first bad indices: (17,4)"));
  EXPECT_TRUE(contains(p, library().debug_guide()));
  EXPECT_FALSE(contains(p, library().cute_guide())) << "the CuTe guide is for compile errors";
  EXPECT_TRUE(contains(p, "`DIAGNOSIS:`"));
  EXPECT_TRUE(contains(p, "Do not write code"));
  EXPECT_TRUE(contains(p, "None: this is the first diagnosis"));
  EXPECT_TRUE(contains(p, "has not passed yet"));

  in.failure = sample_failure(FailureKind::compile_error);
  in.change_under_repair = "cp.async 3-stage pipeline";
  StepRecord attempt;
  attempt.n = 1;
  attempt.idea = "moved cp_async_wait before the barrier";
  attempt.outcome = StepOutcome::compile_error;
  in.attempts = {attempt};
  auto compile = build_diagnose_prompt(library(), in);
  ASSERT_TRUE(compile.ok()) << compile.error().message;
  EXPECT_TRUE(contains(*compile, library().cute_guide()));
  EXPECT_TRUE(contains(*compile, "last optimisation step, which tried: cp.async 3-stage pipeline"));
  EXPECT_TRUE(contains(*compile, "step 1: moved cp_async_wait before the barrier -> compile error"));
}

TEST(PromptBuild, RepairQuotesKernelVerbatimAndAsksForEditsOnly) {
  RepairInput in{sample_gemm(), kKernel, sample_failure(FailureKind::wrong_result),
                 "DIAGNOSIS: B is read transposed.\nFIX: use stride (1, N) for B.\n", {}};
  auto r = build_repair_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_complete(*r, "repair");
  EXPECT_TRUE(contains(*r, "```cuda\n" + kKernel + "```")) << "no line numbers: edits quote this text";
  EXPECT_TRUE(contains(*r, "DIAGNOSIS: B is read transposed."));
  EXPECT_TRUE(contains(*r, "<<<<<<< SEARCH")) << "the edit format comes with the rules";
  EXPECT_TRUE(contains(*r, "`CHANGES:`"));
}

TEST(PromptBuild, OptimizeHasMenuHistoryPerformanceAndProfileState) {
  OptimizeInput in;
  in.problem = sample_gemm();
  in.kernel = kKernel;
  in.best_ms = 4.1;
  in.step = 13;
  in.max_steps = 20;
  in.history = sample_history();
  auto r = build_optimize_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string& p = *r;
  expect_complete(p, "optimize");
  EXPECT_TRUE(contains(p, library().menu(WorkloadClass::gemm)));
  EXPECT_FALSE(contains(p, library().menu(WorkloadClass::elementwise)));
  EXPECT_TRUE(contains(p, "step 13 of 20"));
  EXPECT_TRUE(contains(p, "Current best kernel (below): 4.1 ms, 50.0% of speed-of-light (roofline floor 2.05 ms, compute-bound)"))
      << p;
  EXPECT_TRUE(contains(p, "PyTorch eager: 2.61 ms; the best kernel is 1.57x slower."));
  EXPECT_TRUE(contains(p, "step 3: idea number 3 -> improved, kept: 1 ms [best]"));
  EXPECT_TRUE(contains(p, "step 12: idea number 12"));
  EXPECT_FALSE(contains(p, "step 4: idea number 4 ")) << "history is bounded";
  EXPECT_TRUE(contains(p, "profiles are withheld"));
  EXPECT_TRUE(contains(p, "```cuda\n" + kKernel + "```"));

  in.profile_summary = "dram__throughput 91%\nsm__pipe_tensor_op 12%";
  in.best_ms = 1.0;
  auto profiled = build_optimize_prompt(library(), in);
  ASSERT_TRUE(profiled.ok()) << profiled.error().message;
  EXPECT_TRUE(contains(*profiled, "```text\ndram__throughput 91%\nsm__pipe_tensor_op 12%\n```"));
  EXPECT_TRUE(contains(*profiled, "PyTorch eager: 2.61 ms; the best kernel is 2.61x faster."));
  EXPECT_FALSE(contains(*profiled, "withheld"));
}

TEST(PromptBuild, RestartIsSynthesisWithTheFailureHistory) {
  RestartInput in;
  in.problem = sample_gemm();
  in.why = "5 repair rounds did not fix a mismatch";
  in.failures = sample_history();
  in.last_failure = sample_failure(FailureKind::wrong_result);
  auto r = build_restart_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_complete(*r, "restart");
  EXPECT_TRUE(contains(*r, library().contract()));
  EXPECT_TRUE(contains(*r, "Reason: 5 repair rounds did not fix a mismatch"));
  EXPECT_TRUE(contains(*r, "step 12: idea number 12"));
  EXPECT_TRUE(contains(*r, "first bad indices"));
  EXPECT_TRUE(contains(*r, "| inputs[0] | A | forward() argument | (4096, 4096) | float32 |"));
  EXPECT_TRUE(contains(*r, library().example(WorkloadClass::gemm).source));
}

TEST(PromptBuild, KernelContainingBackticksGetsALongerFence) {
  RepairInput in{sample_gemm(), "// see ```code``` here\nint x;\n", sample_failure(FailureKind::compile_error), "d", {}};
  auto r = build_repair_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(*r, "````cuda\n// see ```code``` here\nint x;\n````")) << *r;
}

TEST(PromptBuild, ValuesWithBracesAreNotRescanned) {
  RepairInput in{sample_gemm(), "int a[2][2] = {{1, 2}, {3, 4}}; // {{rules}}\n", sample_failure(FailureKind::compile_error),
                 "d", {}};
  auto r = build_repair_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(*r, "int a[2][2] = {{1, 2}, {3, 4}}; // {{rules}}\n"));
}

TEST(PromptBuild, EveryTemplateRendersForEveryWorkloadClass) {
  for (WorkloadClass c : all_workload_classes()) {
    ProblemBrief p = sample_elementwise();
    p.workload = c;
    OptimizeInput opt;
    opt.problem = p;
    opt.kernel = kKernel;
    opt.best_ms = 1;
    RestartInput restart;
    restart.problem = p;
    for (auto r : {build_synthesis_prompt(library(), {p}),
                   build_diagnose_prompt(library(), {p, kKernel, sample_failure(FailureKind::runtime_error), "", {}}),
                   build_repair_prompt(library(), {p, kKernel, sample_failure(FailureKind::rejected), "d", {}}),
                   build_optimize_prompt(library(), opt), build_restart_prompt(library(), restart)}) {
      ASSERT_TRUE(r.ok()) << to_string(c) << ": " << r.error().message;
      expect_complete(*r, std::string(to_string(c)));
    }
  }
}

// ---- pieces -----------------------------------------------------------------------------------------

TEST(PromptPieces, NumberLines) {
  EXPECT_EQ(number_lines("a\r\nb\n"), "      1 | a\n      2 | b\n");
  EXPECT_EQ(number_lines("x"), "      1 | x\n");
  EXPECT_EQ(number_lines(""), "");
}

TEST(PromptPieces, ShapesAndPrecision) {
  EXPECT_EQ(format_shape({}), "()");
  EXPECT_EQ(format_shape({7}), "(7,)");
  EXPECT_EQ(format_shape({2, 3, 4}), "(2, 3, 4)");
  EXPECT_TRUE(contains(format_precision_policy("strict"), "3xTF32"));
  EXPECT_TRUE(contains(format_precision_policy("tf32"), "opted in"));
  EXPECT_TRUE(contains(format_precision_policy("bf16"), "bf16"));
}

TEST(PromptPieces, ClipEvidenceSaysWhatWasLeftOut) {
  std::string text;
  for (int i = 1; i <= 100; ++i) text += "line " + std::to_string(i) + "\n";
  const std::string clipped = clip_evidence(text, 10, 100000);
  EXPECT_TRUE(contains(clipped, "line 10\n[... 90 more lines left out]\n")) << clipped;
  EXPECT_FALSE(contains(clipped, "line 11\n"));
  const std::string by_chars = clip_evidence(text, 1000, 30);
  EXPECT_LE(by_chars.size(), 30u + 40u);
  EXPECT_TRUE(contains(by_chars, "more lines left out")) << by_chars;
  EXPECT_EQ(clip_evidence("short\n", 10, 100), "short\n");
}

TEST(PromptLibrary, MismatchedTemplateIsReportedAtStartup) {
  auto dir = std::filesystem::temp_directory_path() / "cutegen_prompt_mismatch_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy(source_root() / "prompts", dir / "prompts", std::filesystem::copy_options::recursive);
  // The repair template loses {{diagnosis}} and gains {{diagnosys}}: both directions are named.
  auto text = read_file(dir / "prompts" / "repair.md");
  ASSERT_TRUE(text.ok());
  std::string t = *text;
  for (std::size_t at; (at = t.find("{{diagnosis}}")) != std::string::npos;) t.replace(at, 13, "{{diagnosys}}");
  std::ofstream(dir / "prompts" / "repair.md") << t;
  PromptPaths paths = repo_paths();
  paths.prompts = dir / "prompts";
  auto lib = PromptLibrary::load(paths);
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  auto s = check_prompt_library(*lib);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.error().message, "repair.md does not match cutegen repair: it never uses {{diagnosis}}; it "
                                          "uses {{diagnosys}} which cutegen does not fill"))
      << s.error().message;
  std::filesystem::remove_all(dir);
}

TEST(PromptBuild, RulesCanTravelInTheSystemMessageInstead) {
  const std::string system = build_system_prompt(library());
  EXPECT_TRUE(contains(system, library().rules()));
  PromptOptions o;
  o.rules_in_system_prompt = true;
  OptimizeInput opt;
  opt.problem = sample_gemm();
  opt.kernel = kKernel;
  opt.best_ms = 3;
  auto r = build_optimize_prompt(library(), opt, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(contains(*r, library().rules())) << "not repeated";
  EXPECT_TRUE(contains(*r, "rules and answer formats in the system message apply"));
  EXPECT_FALSE(contains(*r, "{{"));
}
