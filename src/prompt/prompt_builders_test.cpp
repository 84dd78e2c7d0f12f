// Renders every prompt from the repository's own prompts/ with sample data: the CI guard that the
// files and the builders agree (every placeholder filled, nothing left over), that the rules and the
// contract reach the LLM, and that the problem's facts appear where they should.
#include "prompt/prompt_builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/fs.h"
#include "common/test_helpers.h"

using namespace cutegen;

namespace {
using cutegen::testing::contains;


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

// problems/layernorm.py as the worker describes it: constructor arguments, parameters and a buffer.
ProblemBrief sample_layernorm() {
  ProblemBrief p;
  p.name = "layernorm";
  p.reference_source = *read_file(source_root() / "problems" / "layernorm.py");
  p.workload = WorkloadClass::reduction;
  p.aten_ops = {"aten::native_layer_norm", "aten::mul"};
  p.inputs = {{"x", TensorRole::forward_input, {4096, 8192}, "float32", ""},
              {"norm.weight", TensorRole::parameter, {8192}, "float32", ""},
              {"norm.bias", TensorRole::parameter, {8192}, "float32", ""},
              {"gain", TensorRole::buffer, {8192}, "float32", ""}};
  p.outputs = {{"", TensorRole::output, {4096, 8192}, "float32", ""}};
  p.init_inputs = {{.name = "hidden", .kind = ValueFacts::Kind::scalar, .dtype = "int64", .value = "8192"}};
  p.gpu = "NVIDIA H200";
  p.min_bytes = 268533760;
  p.flops = 100663296;
  p.floor_ms = 0.0562;
  p.floor_bound = "memory";
  p.eager_ms = 0.2341;
  p.compile_ms = 0.1877;
  return p;
}

int occurrences(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const std::string kKernel = "#include <cutegen/kernel.h>\n#include <cute/tensor.hpp>\n// the current kernel\n";

FailureEvidence sample_failure(FailureKind kind) {
  return {kind, Verdict::mismatch, "max abs error 3.2e-02 at (17, 4), 4096 of 16777216 elements",
          "trial 1 (seed 1234): max abs err 3.2e-02, max rel err 1.1e-01\nfirst bad indices: (17,4) (17,5) (17,6)\n"};
}

std::vector<StepRecord> sample_history() {
  std::vector<StepRecord> h;
  for (int n = 1; n <= 12; ++n) {
    StepRecord s;
    s.n = n;
    s.idea = "idea number " + std::to_string(n);
    s.outcome = n == 3 ? StepOutcome::accepted : StepOutcome::slower;
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

// The chosen library kernel is in the prompt, and no other one (they are ~300 lines each).
void expect_one_example(const std::string& prompt, std::string_view file) {
  EXPECT_EQ(occurrences(prompt, "# A reference for CuTe idioms ("), 1) << file;
  for (std::string_view other : example_files()) {
    const std::string& source = library().example(other).source;
    if (other == file || source == library().example(file).source) continue;
    EXPECT_FALSE(contains(prompt, source)) << "shows " << other << " besides " << file;
  }
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
  }
}

// Tokens like `dram__bytes_read.sum` or `launch__occupancy_limit_*` in a prompt text.
std::vector<std::string> metric_names(const std::string& text) {
  std::vector<std::string> out;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  for (std::size_t at = text.find("__"); at != std::string::npos; at = text.find("__", at + 2)) {
    std::size_t b = at, e = at + 2;
    while (b > 0 && word(text[b - 1])) --b;
    while (e < text.size() && word(text[e])) ++e;
    std::string name = text.substr(b, e - b);
    while (!name.empty() && name.back() == '.') name.pop_back();
    if (b < at && e > at + 2 && name.find("__", at - b + 2) == std::string::npos) out.push_back(name);
    at = e - 2;
  }
  return out;
}

TEST(PromptLibrary, MenusNameTheMetricsTheProfileStageCollects) {
  const std::string metrics = *read_file(source_root() / "src" / "profile" / "ncu_metrics.txt");
  for (WorkloadClass c : all_workload_classes()) {
    const std::string& menu = library().menu(c);
    auto names = metric_names(menu);
    EXPECT_FALSE(names.empty()) << to_string(c) << " menu names no Nsight Compute metric";
    // Each is a metric of the list, or a prefix of some (a family like launch__occupancy_limit_).
    for (const std::string& n : names) EXPECT_TRUE(contains(metrics, n)) << to_string(c) << ": " << n;
  }
}

TEST(PromptLibrary, LibraryKernelsNamedInTheGuideAndMenusExist) {
  std::vector<std::string> texts = {library().cute_guide()};
  for (WorkloadClass c : all_workload_classes()) texts.push_back(library().menu(c));
  int named = 0;
  for (const std::string& text : texts) {
    for (std::size_t at = text.find(".cu`"); at != std::string::npos; at = text.find(".cu`", at + 1)) {
      std::size_t b = text.rfind('`', at);
      std::string file = text.substr(b + 1, at + 3 - b - 1);
      if (file.find('*') != std::string::npos) continue;  // gemm_sm90_*.cu: a family
      ++named;
      EXPECT_TRUE(std::filesystem::exists(source_root() / "examples" / "kernels" / file)) << file;
    }
  }
  EXPECT_GE(named, 8);
}

TEST(PromptLibrary, CuteGuideStaysConcise) {
  const std::string& guide = library().cute_guide();
  EXPECT_LE(std::count(guide.begin(), guide.end(), '\n'), 260);
  for (const char* name : {"make_tiled_copy", "SM80_CP_ASYNC_CACHEALWAYS", "cp_async_fence", "cp_async_wait",
                           "make_tiled_mma", "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_16x8x16_F32F16F16F32_TN",
                           "Swizzle<", "local_tile", "local_partition", "make_identity_tensor", "elem_less",
                           "make_tma_copy", "**named** namespace",
                           // the idioms of the library kernels
                           "map_shared_rank", "Layout_K_SW128_Atom", "KernelTmaWarpSpecializedCooperative",
                           "3xTF32 split", "cudaLaunchCooperativeKernel", "copy_aligned", "arrive_and_expect_tx",
                           "SM90_BULK_COPY_G2S"})
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
  // The strict fp32 GEMM is shown the library's 3xTF32 kernel, and told why.
  EXPECT_TRUE(contains(p, "# A reference for CuTe idioms (gemm_sm90_3xtf32.cu)")) << p;
  EXPECT_TRUE(contains(p, "This is the library's strict-fp32 GEMM: 3xTF32 on wgmma")) << p;
  EXPECT_TRUE(contains(p, "2.00x cuBLAS SGEMM on an H200"));
  EXPECT_TRUE(contains(p, "```cuda\n" + library().example("gemm_sm90_3xtf32.cu").source)) << "the example kernel";
  expect_one_example(p, "gemm_sm90_3xtf32.cu");
  EXPECT_FALSE(contains(p, "gemm_tiled.cu")) << "the toy GEMM is not shown";
  EXPECT_TRUE(contains(p, "3xTF32")) << "strict precision policy";
  EXPECT_TRUE(contains(p, "NVIDIA H200 (sm_90a)"));
}

TEST(PromptBuild, SynthesisForElementwiseUsesItsExampleAndSaysWhatIsUnknown) {
  auto r = build_synthesis_prompt(library(), {sample_elementwise()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_complete(*r, "synthesis");
  EXPECT_TRUE(contains(*r, "# A reference for CuTe idioms (elementwise.cu)")) << *r;
  EXPECT_TRUE(contains(*r, "This is the library's elementwise kernel: generic over a device functor"));
  EXPECT_TRUE(contains(*r, library().example("elementwise.cu").source));
  EXPECT_TRUE(contains(*r, "| inputs[1] | negative_slope | forward() scalar argument (host value) | scalar = 0.01 | float64 |"))
      << *r;
  EXPECT_TRUE(contains(*r, "Roofline floor: not available"));
  EXPECT_TRUE(contains(*r, "PyTorch eager: not measured"));
  EXPECT_TRUE(contains(*r, "GPU: unknown."));
}

TEST(PromptBuild, SynthesisShowsTheLibraryKernelOfTheProblem) {
  struct Case {
    const char* what;
    ProblemBrief problem;
    const char* file;
    const char* why;
  };
  ProblemBrief softmax = sample_layernorm();
  softmax.name = "23_Softmax";
  softmax.aten_ops = {"aten::_softmax"};
  ProblemBrief log_softmax = softmax;
  log_softmax.aten_ops = {"aten::_log_softmax"};
  ProblemBrief layernorm = sample_layernorm();
  layernorm.aten_ops = {"aten::native_layer_norm", "aten::mul"};
  ProblemBrief tf32 = sample_gemm();
  tf32.precision = Precision::tf32;
  ProblemBrief bf16_data = sample_gemm();  // no dtype given: the tensors say bf16
  for (auto& t : bf16_data.inputs) t.dtype = "bfloat16";
  ProblemBrief relu = sample_elementwise();
  relu.aten_ops = {"aten::relu"};
  for (const Case& c : {Case{"softmax", softmax, "softmax_cluster.cu", "distributed shared memory"},
                        Case{"log_softmax", log_softmax, "log_softmax_cluster.cu", "row log-softmax"},
                        Case{"layer norm", layernorm, "layernorm_rows_grid.cu", "LayerNorm for long rows"},
                        Case{"tf32 GEMM", tf32, "gemm_sm90_tf32.cu", "TF32 GEMM"},
                        Case{"bf16 GEMM", bf16_data, "gemm_sm90_bf16.cu", "bf16 GEMM"},
                        Case{"relu", relu, "elementwise.cu", "generic over a device functor"}}) {
    auto r = build_synthesis_prompt(library(), {c.problem});
    ASSERT_TRUE(r.ok()) << r.error().message;
    expect_complete(*r, c.what);
    EXPECT_TRUE(contains(*r, std::string("# A reference for CuTe idioms (") + c.file + ")")) << c.what;
    EXPECT_TRUE(contains(*r, c.why)) << c.what;
    EXPECT_TRUE(contains(*r, library().example(c.file).source)) << c.what;
    expect_one_example(*r, c.file);
    EXPECT_TRUE(contains(*r, "declared as a `cutegen:knob`")) << c.what << ": the prompt asks for knobs";
  }
}

TEST(PromptBuild, ExampleFactsDeriveTheDtypeFromTheTensors) {
  ProblemBrief p = sample_gemm();
  EXPECT_EQ(example_facts(p).dtype, "float32");
  p.outputs[0].dtype = "float16";
  EXPECT_EQ(example_facts(p).dtype, "float16") << "the least precise dtype wins";
  p.dtype = "bfloat16";
  EXPECT_EQ(example_facts(p).dtype, "bfloat16") << "the worker's own dtype is kept";
  p.aten_ops = {"aten::mm"};
  p.precision = Precision::tf32;
  ExampleFacts f = example_facts(p);
  EXPECT_EQ(f.aten_ops, p.aten_ops);
  EXPECT_EQ(f.precision, Precision::tf32);
  EXPECT_EQ(f.workload, WorkloadClass::gemm);
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
  attempt.kind = StepKind::repair;
  attempt.n = 1;
  attempt.idea = "moved cp_async_wait before the barrier";
  attempt.outcome = StepOutcome::incorrect;
  attempt.verdict = Verdict::compile_error;
  in.attempts = {attempt};
  auto compile = build_diagnose_prompt(library(), in);
  ASSERT_TRUE(compile.ok()) << compile.error().message;
  EXPECT_TRUE(contains(*compile, library().cute_guide()));
  EXPECT_TRUE(contains(*compile, "last optimisation step, which tried: cp.async 3-stage pipeline"));
  EXPECT_TRUE(contains(*compile, "repair 1: moved cp_async_wait before the barrier -> compile error (compile_error)"))
      << *compile;
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
  EXPECT_TRUE(contains(p, "Current best kernel (below): 4.1 ms, 50.0% of speed-of-light (roofline floor 2.05 ms, "
                         "compute-bound; no kernel can be faster)"))
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
  EXPECT_TRUE(contains(*r, "step 12: idea number 12"));  // restart_prompt labels come from the records' kind
  EXPECT_TRUE(contains(*r, "first bad indices"));
  EXPECT_TRUE(contains(*r, "| inputs[0] | A | forward() argument | (4096, 4096) | float32 |"));
  EXPECT_TRUE(contains(*r, "This is the library's strict-fp32 GEMM")) << *r;
  EXPECT_TRUE(contains(*r, library().example("gemm_sm90_3xtf32.cu").source));
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
  EXPECT_TRUE(contains(format_precision_policy(Precision::strict), "3xTF32"));
  EXPECT_TRUE(contains(format_precision_policy(Precision::tf32), "opted in"));
  EXPECT_TRUE(contains(format_precision_policy(Precision::bf16), "bf16"));
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

// ---- what the prompts tell the LLM about a problem with constructor arguments and parameters -----------

TEST(PromptTruth, TheTensorTableSaysHowTheModelIsBuiltAndWhichDefaultsHold) {
  ProblemBrief p = sample_layernorm();
  const std::string table = format_tensor_table(p);
  EXPECT_TRUE(contains(table, "| inputs[3] | gain | buffer | (8192,) | float32 |")) << table;
  EXPECT_TRUE(contains(table, "get_init_inputs(): [8192], so the model is Model(hidden=8192).")) << table;
  EXPECT_FALSE(contains(table, "get_init_inputs(): none")) << table;
  // nn.LayerNorm(hidden) in the reference: its eps is PyTorch's default, said rather than implied.
  EXPECT_TRUE(contains(table, "PyTorch defaults the reference relies on without writing them (the kernel must match "
                              "them): nn.LayerNorm: eps=1e-05."))
      << table;
  // A constructor default that get_init_inputs() does not pass is stated with its value.
  p.init_inputs.push_back({.name = "eps", .kind = ValueFacts::Kind::scalar, .dtype = "float64", .value = "1e-06",
                           .is_default = true});
  EXPECT_TRUE(contains(format_tensor_table(p), "Model.__init__ keeps its own defaults for what get_init_inputs() does "
                                               "not pass: eps=1e-06."))
      << format_tensor_table(p);
  p.init_inputs = {{.name = "shape", .kind = ValueFacts::Kind::other, .value = "(64, 256, 256)"},
                   {.name = "w", .kind = ValueFacts::Kind::tensor, .dtype = "float32", .shape = {4}}};
  EXPECT_TRUE(contains(format_tensor_table(p), "get_init_inputs(): [(64, 256, 256), <float32 tensor of shape (4,)>], "
                                               "so the model is Model(shape=(64, 256, 256), w=<float32 tensor of "
                                               "shape (4,)>)."))
      << format_tensor_table(p);
  p.init_inputs.clear();
  EXPECT_TRUE(contains(format_tensor_table(p), "get_init_inputs(): [] (Model() takes no arguments)."));
}

TEST(PromptTruth, EveryPromptThatAsksForCodeShowsTheReference) {
  ProblemBrief p = sample_layernorm();
  OptimizeInput opt{p, kKernel, 0.1, 1, 8, {}, ""};
  RepairInput repair{p, kKernel, sample_failure(FailureKind::wrong_result), "DIAGNOSIS: x\nFIX: y\n", {}};
  RestartInput restart{p, "why", {}, std::nullopt};
  for (auto [what, r] : {std::pair{"synthesis", build_synthesis_prompt(library(), {p})},
                         std::pair{"repair", build_repair_prompt(library(), repair)},
                         std::pair{"optimize", build_optimize_prompt(library(), opt)},
                         std::pair{"restart", build_restart_prompt(library(), restart)}}) {
    ASSERT_TRUE(r.ok()) << what << ": " << r.error().message;
    EXPECT_TRUE(contains(*r, "```python\n" + p.reference_source)) << what << " lacks the reference module";
    EXPECT_EQ(occurrences(*r, "self.norm = nn.LayerNorm(hidden)"), 1) << what << ": the reference once";
    EXPECT_TRUE(contains(*r, "Model(hidden=8192)")) << what;
  }
}

TEST(PromptTruth, TheOptimisePromptShowsEachBaselineAndTheFloorOnce) {
  OptimizeInput in{sample_layernorm(), kKernel, 0.1124, 2, 8, {}, ""};
  auto r = build_optimize_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(occurrences(*r, "0.2341 ms"), 1) << *r;  // eager
  EXPECT_EQ(occurrences(*r, "0.1877 ms"), 1) << *r;  // torch.compile
  EXPECT_EQ(occurrences(*r, "0.0562 ms"), 1) << *r;  // the floor
  EXPECT_TRUE(contains(*r, "- PyTorch eager: 0.2341 ms; the best kernel is 2.08x faster.")) << *r;
  EXPECT_TRUE(contains(*r, "- torch.compile: 0.1877 ms; the best kernel is 1.67x faster.")) << *r;
  EXPECT_TRUE(contains(*r, "269 MB")) << "bytes and FLOPs stay";
}

TEST(PromptTruth, HistoryShowsAnUndoneStepAsAFailedIdeaAndEachSpeedupOnce) {
  OptimizeInput in{sample_layernorm(), kKernel, 0.1124, 4, 8, {}, ""};
  StepRecord accepted{.n = 1, .idea = "one block per row, 256 threads", .outcome = StepOutcome::accepted,
                      .time_ms = 0.1124, .speedup = 1.314};
  StepRecord undone{.n = 2, .idea = "two-pass with a second combining kernel", .outcome = StepOutcome::undone,
                    .verdict = Verdict::mismatch, .note = "trial 3 (signed inputs) failed: mismatch",
                    .evidence = "output 0: 8192 of 33554432 elements bad; max abs err 0.41"};
  StepRecord slower{.n = 3, .idea = "128-bit loads", .outcome = StepOutcome::slower, .time_ms = 0.113,
                    .speedup = 0.995, .note = "needed more than the noise, 0.0022 ms"};
  in.history = {accepted, undone, slower};
  auto r = build_optimize_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(*r, "step 2: two-pass with a second combining kernel -> broke the kernel: wrong result "
                           "(mismatch); the repair only undid the change, so the idea failed: trial 3 (signed inputs) "
                           "failed: mismatch; evidence: output 0: 8192 of 33554432 elements bad; max abs err 0.41"))
      << *r;
  EXPECT_FALSE(contains(*r, "step 2: two-pass with a second combining kernel -> correct but not faster")) << *r;
  EXPECT_EQ(occurrences(*r, "1.31x"), 1) << *r;
  EXPECT_TRUE(contains(*r, "step 1: one block per row, 256 threads -> improved, kept: 0.1124 ms; 1.31x the best before "
                           "[best]"))
      << *r;
  EXPECT_TRUE(contains(*r, "step 3: 128-bit loads -> correct but not faster, rolled back: 0.113 ms; 0.99x the best "
                           "before; needed more than the noise, 0.0022 ms"))
      << *r;
}

TEST(PromptTruth, TheOptimisePromptOffersADecline) {
  OptimizeInput in{sample_layernorm(), kKernel, 0.1, 1, 8, {}, ""};
  auto r = build_optimize_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(*r, "`NO_FURTHER_CHANGE:`")) << *r;
  EXPECT_TRUE(contains(*r, "without spending an evaluation")) << *r;
  EXPECT_TRUE(contains(library().rules(), "NO_FURTHER_CHANGE: ")) << "the answer format is in the rules";
}

TEST(PromptTruth, RestartLabelsEachSynthesisAttemptByWhatHappened) {
  RestartInput in{sample_layernorm(), "the last attempt still failed with cuda_error after its repair rounds", {},
                  sample_failure(FailureKind::runtime_error)};
  in.failures = {{.kind = StepKind::synthesis, .n = 1, .outcome = StepOutcome::unusable,
                  .note = "no usable kernel in the answer: no code block"},
                 {.kind = StepKind::synthesis, .n = 2, .outcome = StepOutcome::incorrect, .verdict = Verdict::cuda_error,
                  .note = "cuda_error after 4 repair rounds: illegal address"}};
  auto r = build_restart_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(*r, "synthesis attempt 1 -> answer unusable (format or edits did not apply): no usable kernel in "
                           "the answer: no code block"))
      << *r;
  EXPECT_TRUE(contains(*r, "synthesis attempt 2 -> runtime failure (cuda_error): cuda_error after 4 repair rounds"))
      << *r;
  EXPECT_FALSE(contains(*r, "step 1:")) << *r;
  EXPECT_FALSE(contains(*r, "rolled back")) << "a synthesis attempt had nothing to roll back to";
}

TEST(PromptTruth, TheExampleKernelIsAReferenceForIdiomsNotAFirstVersion) {
  for (auto r : {build_synthesis_prompt(library(), {sample_layernorm()}),
                 build_restart_prompt(library(), {sample_layernorm(), "why", {}, std::nullopt})}) {
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(contains(*r, "# A reference for CuTe idioms (layernorm_rows_grid.cu)")) << *r;
    EXPECT_TRUE(contains(*r, "not as a\nversion of this problem's kernel") ||
                contains(*r, "It is **not** a first version to copy"))
        << *r;
    EXPECT_FALSE(contains(*r, "An example kernel of the same kind")) << *r;
  }
}
