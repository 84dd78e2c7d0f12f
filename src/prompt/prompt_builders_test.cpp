// Renders every prompt from the repository's own prompts/ with sample data: the CI guard that the
// files and the builders agree (every placeholder filled, nothing left over), that the rules reach the
// LLM in the system message, and that the problem's facts appear where they should.
#include "prompt/prompt_builders.h"

#include "prompt/menu_items.h"
#include "prompt/problem_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;

namespace {
using cutegen::testing::contains;


std::filesystem::path source_root() { return CUTEGEN_SOURCE_ROOT; }

PromptPaths repo_paths() {
  return {source_root() / "prompts", source_root() / "library"};
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
  p.gpu = "NVIDIA H200";
  p.arch = "sm_90a";
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

// Every rendered prompt: no placeholder or template header left, and none of the system message's
// material repeated (the rules, the guide and the menu travel once, in the system message).
void expect_complete(const std::string& prompt, const std::string& what) {
  EXPECT_FALSE(contains(prompt, "{{")) << what << " has an unfilled placeholder";
  EXPECT_FALSE(contains(prompt, "<!--")) << what << " still has the template header";
  EXPECT_FALSE(contains(prompt, "## Forbidden")) << what << " repeats the rules";
  EXPECT_FALSE(contains(prompt, "## Layouts: (shape):(stride)")) << what << " repeats the CuTe guide";
  EXPECT_FALSE(contains(prompt, "# Optimisation menu")) << what << " repeats the menu";
}

// What the LLM reads in one call: the kind's system message (rules, its guide or menu, the problem),
// then the prompt.
std::string whole(PromptKind kind, const ProblemBrief& p, const std::string& prompt, const PromptOptions& o = {}) {
  auto system = build_system_prompt(library(), p, kind, o);
  EXPECT_TRUE(system.ok()) << system.error().message;
  return (system.ok() ? *system : std::string()) + "\n\n" + prompt;
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
  std::vector<std::string> texts = {library().cute_guide(WorkloadClass::gemm),
                                    library().cute_guide(WorkloadClass::reduction)};
  for (WorkloadClass c : all_workload_classes()) texts.push_back(library().menu(c));
  int named = 0;
  for (const std::string& text : texts) {
    for (std::size_t at = text.find(".cu`"); at != std::string::npos; at = text.find(".cu`", at + 1)) {
      std::size_t b = text.rfind('`', at);
      std::string file = text.substr(b + 1, at + 3 - b - 1);
      if (file.find('*') != std::string::npos) continue;  // gemm_sm90_*.cu: a family
      ++named;
      EXPECT_TRUE(std::filesystem::exists(source_root() / "library" / file)) << file;
    }
  }
  EXPECT_GE(named, 8);
}

TEST(PromptLibrary, CuteGuideStaysConcise) {
  const std::string guide = *read_file(source_root() / "prompts" / "cute_guide.md");
  EXPECT_LE(std::count(guide.begin(), guide.end(), '\n'), 280);
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

TEST(PromptBuild, SynthesisWithItsSystemMessageHasProblemShapesContractRulesAndExample) {
  auto r = build_synthesis_prompt(library(), {sample_gemm()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_complete(*r, "synthesis");
  const std::string p = whole(PromptKind::synthesis, sample_gemm(), *r);
  EXPECT_EQ(occurrences(p, "## The contract"), 1) << "the contract once";
  EXPECT_TRUE(contains(p, "typedef struct cutegen_tensor {")) << "the descriptor is part of it";
  EXPECT_TRUE(contains(p, library().cute_guide(WorkloadClass::gemm)));
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
  EXPECT_TRUE(contains(p, "GPU: NVIDIA H200."));
  EXPECT_TRUE(contains(p, "one `-gencode` for `sm_90a`")) << "the arch the run compiles for";
}

TEST(PromptBuild, SynthesisForElementwiseUsesItsExampleAndSaysWhatIsUnknown) {
  auto r = build_synthesis_prompt(library(), {sample_elementwise()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_complete(*r, "synthesis");
  EXPECT_TRUE(contains(*r, "# A reference for CuTe idioms (elementwise.cu)")) << *r;
  EXPECT_TRUE(contains(*r, "This is the library's elementwise kernel: generic over a device functor"));
  EXPECT_TRUE(contains(*r, library().example("elementwise.cu").source));
  const std::string w = whole(PromptKind::synthesis, sample_elementwise(), *r);
  EXPECT_TRUE(contains(w, "| inputs[1] | negative_slope | forward() scalar argument (host value) | scalar = 0.01 | float64 |"))
      << w;
  EXPECT_TRUE(contains(w, "Roofline floor: not available"));
  EXPECT_TRUE(contains(w, "PyTorch eager: not measured"));
  EXPECT_TRUE(contains(w, "GPU: unknown."));
}

// --examples none (the paper's setting): no library kernel, and a line that says so.
TEST(PromptBuild, WithoutExamplesNoLibraryKernelIsShown) {
  PromptOptions o;
  o.show_example = false;
  for (auto r : {build_synthesis_prompt(library(), {sample_gemm()}, o),
                 build_restart_prompt(library(), {sample_gemm(), "why", {}, std::nullopt}, o)}) {
    ASSERT_TRUE(r.ok()) << r.error().message;
    expect_complete(*r, "no example");
    EXPECT_FALSE(contains(*r, "# A reference for CuTe idioms")) << *r;
    EXPECT_TRUE(contains(*r, "No library kernel is shown in this run (--examples none)")) << *r;
    const std::string w = whole(PromptKind::synthesis, sample_gemm(), *r, o);
    for (std::string_view file : example_files())
      EXPECT_FALSE(contains(w, library().example(file).source)) << file << " is in the conversation";
  }
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
  for (const Case& c : {Case{"softmax", softmax, "softmax_ticket.cu", "chunks handed to every SM"},
                        Case{"log_softmax", log_softmax, "log_softmax_ticket.cu", "row log-softmax"},
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
  DiagnoseInput in{sample_gemm(), kKernel, sample_failure(FailureKind::wrong_result), "", "", {}};
  auto r = build_diagnose_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string& p = *r;
  expect_complete(p, "diagnose");
  EXPECT_TRUE(contains(p, "\n3 | // the current kernel\n")) << p;
  EXPECT_TRUE(contains(p, "wrong result (verdict `mismatch`): max abs error 3.2e-02"));
  EXPECT_TRUE(contains(p, "first bad indices: (17,4)"));
  // The guide's lead is in the diagnose system message, cached; its sections by symptom come with a wrong
  // result's request, the CuTe guide's compile errors with a compile error's only.
  const std::string lead = debug_guide_lead(library().debug_guide());
  EXPECT_TRUE(contains(lead, "# Debugging a failing kernel")) << lead;
  EXPECT_FALSE(contains(p, lead));
  EXPECT_TRUE(contains(whole(PromptKind::diagnose, sample_gemm(), p), lead));
  EXPECT_TRUE(contains(p, "# Debugging a failing kernel, by symptom\n\n" + debug_guide_sections(library().debug_guide()) +
                              "\n\n# The kernel"))
      << p;
  EXPECT_FALSE(contains(whole(PromptKind::diagnose, sample_gemm(), p), "Common compile errors")) << p;
  // Of the guide's list of verdicts, the request carries its own verdict's item and the system message none.
  EXPECT_TRUE(contains(p, "What this verdict usually means:\n**mismatch**: wrong values.")) << p;
  EXPECT_FALSE(contains(p, "**unwritten**")) << p;
  EXPECT_FALSE(contains(whole(PromptKind::diagnose, sample_gemm(), p), "## What each verdict usually means"));
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
  in.change_diff = "--- a/kernel.cu\n+++ b/kernel.cu\n@@ -3 +3 @@\n-// the best kernel\n+// the current kernel\n";
  auto compile = build_diagnose_prompt(library(), in);
  ASSERT_TRUE(compile.ok()) << compile.error().message;
  EXPECT_TRUE(contains(*compile, "last optimisation step, which tried: cp.async 3-stage pipeline"));
  // The step's own diff, not a summary of it.
  EXPECT_TRUE(contains(*compile, "Its changes to the last correct kernel:\n```diff\n--- a/kernel.cu\n+++ b/kernel.cu\n"
                                 "@@ -3 +3 @@\n-// the best kernel\n+// the current kernel\n```"))
      << *compile;
  EXPECT_TRUE(contains(*compile, "repair 1: moved cp_async_wait before the barrier -> compile error (compile_error)"))
      << *compile;
  auto errors = compile_errors_section(library().cute_guide(sample_gemm().workload));
  ASSERT_TRUE(errors.ok()) << errors.error().message;
  EXPECT_TRUE(contains(*compile, "\n\n" + *errors)) << *compile;
  EXPECT_TRUE(contains(*compile, "# Common compile errors")) << *compile;
  EXPECT_FALSE(contains(whole(PromptKind::diagnose, sample_gemm(), *compile), "## Reading a mismatch pattern"))
      << "a compile error's diagnosis carries no guide to races and barriers";
  // A rejection: the verdict's item and the rules, no reference.
  in.failure = sample_failure(FailureKind::rejected);
  auto rejected = build_diagnose_prompt(library(), in);
  ASSERT_TRUE(rejected.ok()) << rejected.error().message;
  EXPECT_FALSE(contains(*rejected, "Common compile errors")) << *rejected;
  EXPECT_FALSE(contains(*rejected, "## Reading a mismatch pattern")) << *rejected;
  EXPECT_TRUE(contains(*rejected, "\n\n# The kernel")) << *rejected;
  EXPECT_FALSE(contains(*rejected, "\n\n\n# The kernel")) << "no empty reference block: " << *rejected;
}

// Every failing verdict has its item in the debugging guide (python/tests/test_verdict_lists.py holds the
// guide to the verdict list), and the diagnose request finds it by the verdict's word.
TEST(PromptPieces, VerdictMeaningIsTheGuidesItemForThatVerdict) {
  const std::string& guide = library().debug_guide();
  for (int v = static_cast<int>(Verdict::compile_error); v <= static_cast<int>(kLastVerdict); ++v) {
    const std::string word = to_string(static_cast<Verdict>(v));
    const std::string meaning = verdict_meaning(guide, word);
    EXPECT_TRUE(contains(meaning, word)) << word << ": " << meaning;
    EXPECT_EQ(meaning.rfind("**", 0), 0u) << word << ": the item, less its dash";
    EXPECT_FALSE(contains(meaning, "\n- ")) << word << ": one item only";
  }
  EXPECT_TRUE(contains(verdict_meaning(guide, "cuda_error"), "**crash / cuda_error (illegal address")) << "a group";
  EXPECT_TRUE(contains(verdict_meaning(guide, "crash"), "leaves its\nbuffer")) << "continuation lines unindented";
  EXPECT_EQ(verdict_meaning(guide, "pass"), "");
  EXPECT_EQ(verdict_meaning(guide, "error"), "") << "whole words only";
  const std::string lead = debug_guide_lead(guide), sections = debug_guide_sections(guide);
  EXPECT_FALSE(contains(lead + sections, "**mismatch**")) << "the verdict list is in neither";
  EXPECT_TRUE(contains(lead, "# Debugging a failing kernel")) << lead;
  EXPECT_FALSE(contains(lead, "## Reading a mismatch pattern")) << lead;
  EXPECT_EQ(sections.rfind("## Reading a mismatch pattern", 0), 0u) << sections;
  EXPECT_TRUE(contains(sections, "## Races: symptoms and causes")) << sections;
}

TEST(PromptBuild, RepairQuotesKernelVerbatimAndAsksForEditsOnly) {
  RepairInput in{sample_gemm(), kKernel, sample_failure(FailureKind::wrong_result),
                 "DIAGNOSIS: B is read transposed.\nFIX: use stride (1, N) for B.\n", {}};
  auto r = build_repair_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_complete(*r, "repair");
  EXPECT_TRUE(contains(*r, "# The current kernel\n```cuda\n" + kKernel + "```")) << "no line numbers: edits quote this text";
  EXPECT_TRUE(contains(*r, "DIAGNOSIS: B is read transposed."));
  EXPECT_TRUE(contains(whole(PromptKind::repair, sample_gemm(), *r), "<<<<<<< SEARCH")) << "the edit format comes with the rules";
  EXPECT_TRUE(contains(*r, "`CHANGES:`"));
  EXPECT_FALSE(contains(*r, "Common compile errors")) << "a wrong result's repair: the diagnosis read the guide";
  EXPECT_FALSE(contains(*r, "## Reading a mismatch pattern"));

  // A diagnosis that cites lines gets the kernel with the same numbers as the diagnose prompt's.
  in.diagnosis = "DIAGNOSIS: line 3 reads B transposed.\nLOCATION: line 3.\nFIX: swap the strides.\n";
  auto numbered = build_repair_prompt(library(), in);
  ASSERT_TRUE(numbered.ok()) << numbered.error().message;
  EXPECT_TRUE(contains(*numbered, "```text\n" + number_lines(kKernel) + "```")) << *numbered;
  EXPECT_TRUE(contains(*numbered, "SEARCH never quotes them")) << *numbered;

  // A compile error's repair carries the CuTe guide's compile errors, before the kernel.
  in.failure = sample_failure(FailureKind::compile_error);
  auto compile = build_repair_prompt(library(), in);
  ASSERT_TRUE(compile.ok()) << compile.error().message;
  auto errors = compile_errors_section(library().cute_guide(sample_gemm().workload));
  ASSERT_TRUE(errors.ok()) << errors.error().message;
  while (!errors->empty() && errors->back() == '\n') errors->pop_back();
  EXPECT_TRUE(contains(*compile, "\n\n" + *errors + "\n\n# The current kernel")) << *compile;
}

TEST(PromptPieces, CitesLineNumbers) {
  EXPECT_TRUE(cites_line_numbers("LOCATION: line 24 (the tX partition)"));
  EXPECT_TRUE(cites_line_numbers("lines 30-41 of the mainloop"));
  EXPECT_TRUE(cites_line_numbers("Line:7"));
  EXPECT_TRUE(cites_line_numbers("see L42"));
  EXPECT_TRUE(cites_line_numbers("kernel.cu:24 asserts"));
  EXPECT_FALSE(cites_line_numbers("the pipeline reads B transposed; fix the stride"));
  EXPECT_FALSE(cites_line_numbers("a line of threads, a baseline of 24 ms"));
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
  // The class's menu: its index in the system message, the item step 13 comes to (13 mod 9 = item 4) in full.
  const std::string w = whole(PromptKind::optimize, in.problem, p);
  const Menu gemm = parse_menu(library().menu(WorkloadClass::gemm));
  EXPECT_TRUE(contains(w, menu_index(gemm).substr(0, 200)));
  for (const MenuItem& item : gemm.items) EXPECT_TRUE(contains(w, item.index_line)) << item.name;
  EXPECT_TRUE(contains(p, "# The menu item this step comes to in the menu's order\n" + gemm.items[3].shown)) << p;
  EXPECT_FALSE(contains(w, gemm.items[2].shown)) << "only one item in full";
  // Its "When it helps" line is said once, in the index line.
  EXPECT_NE(gemm.items[3].shown, gemm.items[3].text);
  EXPECT_FALSE(contains(p, "- When it helps:")) << p;
  EXPECT_FALSE(contains(w, parse_menu(library().menu(WorkloadClass::elementwise)).items[0].index_line));
  EXPECT_TRUE(contains(p, "step 13 of 20"));
  EXPECT_TRUE(contains(p, "Current best kernel (below): 4.1 ms, 50.0% of speed-of-light (the roofline floor above)"))
      << p;
  EXPECT_TRUE(contains(p, "- Against PyTorch eager: the best kernel is 1.57x slower."));
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
  EXPECT_TRUE(contains(*profiled, "- Against PyTorch eager: the best kernel is 2.61x faster."));
  EXPECT_FALSE(contains(*profiled, "withheld"));
  EXPECT_FALSE(contains(*profiled, "ptxas"));

  in.compiler_notes = {"(C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized"};
  auto noted = build_optimize_prompt(library(), in);
  ASSERT_TRUE(noted.ok()) << noted.error().message;
  EXPECT_TRUE(contains(*noted, "- ptxas, building the best kernel: (C7510) Potential Performance Loss: "
                               "wgmma.mma_async instructions are serialized (a cost with no error")) << *noted;
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
  EXPECT_TRUE(contains(*r, "Reason: 5 repair rounds did not fix a mismatch"));
  EXPECT_TRUE(contains(*r, "step 12: idea number 12"));  // restart_prompt labels come from the records' kind
  EXPECT_TRUE(contains(*r, "first bad indices"));
  EXPECT_TRUE(contains(whole(PromptKind::restart, in.problem, *r), "| inputs[0] | A | forward() argument | (4096, 4096) | float32 |"));
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
                   build_diagnose_prompt(library(), {p, kKernel, sample_failure(FailureKind::runtime_error), "", "", {}}),
                   build_repair_prompt(library(), {p, kKernel, sample_failure(FailureKind::rejected), "d", {}}),
                   build_optimize_prompt(library(), opt), build_restart_prompt(library(), restart)}) {
      ASSERT_TRUE(r.ok()) << to_string(c) << ": " << r.error().message;
      expect_complete(*r, std::string(to_string(c)));
    }
    for (PromptKind k : kAllPromptKinds) {
      const std::string what = fmt::format("{} {}", to_string(c), to_string(k));
      auto system = build_system_prompt(library(), p, k);
      ASSERT_TRUE(system.ok()) << what << ": " << system.error().message;
      EXPECT_FALSE(contains(*system, "{{")) << what;
      EXPECT_FALSE(contains(*system, "<!--")) << what << ": a template header or guide marker is left";
      // Each kind its own reference: the menu to optimise, the guide to write a kernel.
      EXPECT_EQ(contains(*system, optimize_menu_index(library().menu(c))), k == PromptKind::optimize) << what;
      EXPECT_EQ(contains(*system, library().cute_guide(c)), k == PromptKind::synthesis || k == PromptKind::restart)
          << what;
      EXPECT_EQ(contains(*system, debug_guide_lead(library().debug_guide())), k == PromptKind::diagnose) << what;
      // What depends on the failure is in its request, not in a system message every failure pays for.
      EXPECT_FALSE(contains(*system, "\n# Common compile errors")) << what;
      EXPECT_FALSE(contains(*system, "## Reading a mismatch pattern")) << what;
      EXPECT_FALSE(contains(*system, "\n\n\n# The problem")) << what << ": an empty reference leaves no gap";
    }
  }
}

// Each kind carries the rules its answer can break and its own answer format: the whole contract to
// write a kernel or mend one, less what a correct kernel already shows to optimise one.
TEST(PromptBuild, EachKindGetsTheRulesItsAnswerCanBreakAndItsAnswerFormat) {
  auto system = [](PromptKind k) {
    auto s = build_system_prompt(library(), sample_gemm(), k);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? *s : std::string();
  };
  for (PromptKind k : kAllPromptKinds) {
    const std::string s = system(k), what(to_string(k));
    for (const char* everywhere : {"# Rules for every cutegen kernel", "## Forbidden", "## CuTe must really be used",
                                   "## Correct first, and honestly", "## Precision: strict", "cutegen_forward_ws",
                                   "filled with NaN before every call", "## Answer format"})
      EXPECT_TRUE(contains(s, everywhere)) << what << " lacks " << everywhere;
    const bool writes = k == PromptKind::synthesis || k == PromptKind::restart;
    const bool mends = k == PromptKind::diagnose || k == PromptKind::repair;
    EXPECT_EQ(contains(s, "typedef struct cutegen_tensor {"), writes || mends) << what;
    EXPECT_EQ(contains(s, "Exactly one entry point:"), writes || mends) << what;
    EXPECT_EQ(contains(s, "## Knobs: expose tile sizes"), writes || k == PromptKind::optimize) << what;
    EXPECT_EQ(contains(s, "## Answer: a whole file"), writes) << what;
    EXPECT_EQ(contains(s, "<<<<<<< SEARCH"), k == PromptKind::repair || k == PromptKind::optimize) << what;
    EXPECT_EQ(contains(s, "NO_FURTHER_CHANGE: "), k == PromptKind::optimize) << what;
  }
}

// ---- pieces -----------------------------------------------------------------------------------------

TEST(PromptPieces, NumberLines) {
  EXPECT_EQ(number_lines("a\r\nb\n"), "1 | a\n2 | b\n");
  EXPECT_EQ(number_lines("x"), "1 | x\n");
  std::string twelve;
  for (int i = 0; i < 12; ++i) twelve += "l\n";
  EXPECT_EQ(number_lines(twelve).substr(0, 14), " 1 | l\n 2 | l\n") << "as wide as the last number";
  EXPECT_NE(number_lines(twelve).find("\n12 | l\n"), std::string::npos);
  EXPECT_EQ(number_lines(""), "");
}

TEST(PromptPieces, ShapesAndPrecision) {
  EXPECT_EQ(format_shape({}), "()");
  EXPECT_EQ(format_shape({7}), "(7,)");
  EXPECT_EQ(format_shape({2, 3, 4}), "(2, 3, 4)");
}

// The precision rule says what compare.py checks: both terms of the element bound, with the numbers
// of the policy in force, and never that plain TF32 fails when the run allows it.
TEST(PromptTruth, ThePrecisionRuleIsTheComparisonTheJudgeMakes) {
  const std::string strict = format_precision_rule(Precision::strict, "float32");
  EXPECT_TRUE(contains(strict, "## Precision: strict")) << strict;
  EXPECT_TRUE(contains(strict, "|out - ref| > 1e-04 * max|ref| + 1e-04 * |ref| + 5 x PyTorch's largest element error"))
      << strict;
  EXPECT_TRUE(contains(strict, "exceeds max(1e-06, 5 x PyTorch's)")) << strict;
  EXPECT_TRUE(contains(strict, "float64 reference")) << strict;
  EXPECT_TRUE(contains(strict, "Plain TF32 (one MMA on rounded operands) is 70 to 1000 times less accurate")) << strict;
  const std::string tf32 = format_precision_rule(Precision::tf32, "float32");
  EXPECT_TRUE(contains(tf32, "## Precision: tf32 (the user opted in)")) << tf32;
  EXPECT_TRUE(contains(tf32, "1e-03 * max|ref| + 1e-03 * |ref|")) << tf32;
  EXPECT_TRUE(contains(tf32, "may use TF32 tensor-core MMAs")) << tf32;
  EXPECT_FALSE(contains(tf32, "fails, on")) << "plain TF32 is what --precision tf32 allows: " << tf32;
  EXPECT_FALSE(contains(tf32, "3xTF32")) << tf32;
  const std::string bf16 = format_precision_rule(Precision::bf16, "float32");
  EXPECT_TRUE(contains(bf16, "1e-02 * max|ref| + 1e-02 * |ref|")) << bf16;
  EXPECT_TRUE(contains(bf16, "max(2e-02, 5 x PyTorch's)")) << bf16;
  // A half-precision problem has its own bounds, whatever the policy, against a float32 reference.
  const std::string half = format_precision_rule(Precision::strict, "bfloat16");
  EXPECT_TRUE(contains(half, "float32 reference")) << half;
  EXPECT_TRUE(contains(half, "2e-02 * max|ref| + 2e-02 * |ref|")) << half;
  EXPECT_FALSE(contains(half, "Plain TF32")) << half;
  // No matrix product, no tensor-core material: fp32 arithmetic, whatever the policy.
  for (Precision policy : {Precision::strict, Precision::tf32, Precision::bf16}) {
    const std::string pointwise = format_precision_rule(policy, "float32", false);
    EXPECT_TRUE(contains(pointwise, "fp32 arithmetic passes in any order of summation; fp16 or bf16 arithmetic on "
                                    "fp32 data fails"))
        << pointwise;
    EXPECT_FALSE(contains(pointwise, "MMA")) << pointwise;
    EXPECT_TRUE(contains(pointwise, "Accumulate sums")) << pointwise;
  }
  EXPECT_TRUE(contains(format_precision_rule(Precision::tf32, "float32", false), "bounds are for matrix products"));
  EXPECT_FALSE(has_matrix_products(WorkloadClass::reduction));
  EXPECT_TRUE(has_matrix_products(WorkloadClass::other)) << "a matrix product may hide in other work";
}

// The numbers in the rule are compare.py's: POLICIES, _HALF_PROBLEMS and TORCH_ERROR_FACTOR, read from
// the worker's source so the two cannot drift apart.
TEST(PromptTruth, ThePrecisionNumbersAreTheWorkersOwn) {
  const std::string compare = *read_file(source_root() / "python" / "cutegen_worker" / "compare.py");
  auto tuple_after = [&](const std::string& key) {
    std::size_t at = compare.find(key);
    EXPECT_NE(at, std::string::npos) << key;
    std::size_t open = compare.find('(', at), close = compare.find(')', open);
    std::vector<double> v;
    std::string inner = compare.substr(open + 1, close - open - 1);
    for (std::size_t p = 0; p < inner.size();) {
      std::size_t q = inner.find(',', p);
      if (q == std::string::npos) q = inner.size();
      v.push_back(std::stod(inner.substr(p, q - p)));
      p = q + 1;
    }
    return v;
  };
  auto expect_tolerance = [&](const std::string& key, Precision precision, const char* dtype) {
    const PrecisionTolerance t = precision_tolerance(precision, dtype);
    EXPECT_EQ(tuple_after(key), (std::vector<double>{t.atol, t.rtol, t.rel_l2_floor})) << key;
  };
  expect_tolerance("\"strict\":", Precision::strict, "float32");
  expect_tolerance("\"tf32\":", Precision::tf32, "float32");
  expect_tolerance("\"bf16\":", Precision::bf16, "float32");
  expect_tolerance("torch.float16:", Precision::tf32, "float16");
  expect_tolerance("torch.bfloat16:", Precision::strict, "bfloat16");
  EXPECT_TRUE(contains(compare, fmt::format("TORCH_ERROR_FACTOR = {:.1f}", kTorchErrorFactor)));
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

// The system message states the rules as the run applies them: the arch it compiles for, the
// precision policy in force, and the CuTe check as the judge makes it.
TEST(PromptTruth, TheSystemMessageCarriesTheRulesOfThisRun) {
  for (PromptKind k : kAllPromptKinds) {
    const std::string what(to_string(k));
    ProblemBrief p = sample_gemm();
    auto system = build_system_prompt(library(), p, k);
    ASSERT_TRUE(system.ok()) << system.error().message;
    EXPECT_TRUE(contains(*system, "# Rules for every cutegen kernel")) << what;
    EXPECT_TRUE(contains(*system, "one `-gencode` for `sm_90a`")) << what;
    EXPECT_TRUE(contains(*system, "## Precision: strict")) << what;
    EXPECT_FALSE(contains(*system, "is rejected by name, whatever the other kernels do")) << "the check is per kernel";
    EXPECT_TRUE(contains(*system, "a kernel with no CuTe access is\n  rejected, the message naming the kernel")) << what;
    EXPECT_TRUE(contains(*system, "second, unoptimised compile")) << what;
    p.arch = "sm_100a";
    p.precision = Precision::tf32;
    system = build_system_prompt(library(), p, k);
    ASSERT_TRUE(system.ok()) << system.error().message;
    EXPECT_TRUE(contains(*system, "one `-gencode` for `sm_100a`")) << what;
    EXPECT_FALSE(contains(*system, "sm_90a`,")) << "no architecture but the run's";
    EXPECT_TRUE(contains(*system, "## Precision: tf32 (the user opted in)")) << what;
    EXPECT_FALSE(contains(*system, "Plain TF32 (one MMA on rounded operands) is 70 to 1000 times less accurate"));
  }
}

// The item on shapes says what the run's judge does: how many other shapes a passing kernel meets, or none.
TEST(PromptTruth, TheShapesRuleIsTheRunsGeneralization) {
  ProblemBrief p = sample_elementwise();
  p.other_shapes = 2;
  auto system = build_system_prompt(library(), p, PromptKind::synthesis);
  ASSERT_TRUE(system.ok()) << system.error().message;
  EXPECT_TRUE(contains(*system, "A kernel that passes (in a step: beats the best) is then run at 2 other sizes of the problem")) << *system;
  EXPECT_TRUE(contains(*system, "(`shape_specific`)")) << *system;
  EXPECT_FALSE(contains(*system, "batch 1")) << "two trials: smaller and larger";
  EXPECT_FALSE(contains(*system, "{{shapes_rule}}"));
  EXPECT_TRUE(contains(format_shapes_rule(3), "a larger batch, batch 1)"));
  EXPECT_TRUE(contains(format_shapes_rule(1), "run at 1 other size of"));
  p.other_shapes = 0;
  system = build_system_prompt(library(), p, PromptKind::synthesis);
  ASSERT_TRUE(system.ok()) << system.error().message;
  EXPECT_TRUE(contains(*system, "This run judges the kernel at the problem's own shape only")) << *system;
  EXPECT_FALSE(contains(*system, "shape_specific")) << *system;
}

// The item on fresh inputs names parameters and integer inputs where the problem has them.
TEST(PromptTruth, TheFreshInputsRuleFitsTheProblemsTensors) {
  const std::string relu = format_fresh_inputs_rule(sample_elementwise());
  EXPECT_TRUE(contains(relu, "- Inputs are drawn afresh for every call, also signed and scaled by 100")) << relu;
  EXPECT_FALSE(contains(relu, "LayerNorm")) << relu;
  EXPECT_FALSE(contains(relu, "Integer inputs")) << relu;
  EXPECT_TRUE(contains(relu, "The time reported is the slower of the problem's own inputs and signed inputs.")) << relu;
  const std::string norm = format_fresh_inputs_rule(sample_layernorm());
  EXPECT_TRUE(contains(norm, "Inputs and parameters (weights, biases, norm scales, buffers) are drawn afresh")) << norm;
  EXPECT_TRUE(contains(norm, "LayerNorm's initial weight 1 / bias 0 fails")) << norm;
  ProblemBrief gather = sample_elementwise();
  gather.inputs.push_back({"index", TensorRole::forward_input, {16}, "int64", ""});
  EXPECT_TRUE(contains(format_fresh_inputs_rule(gather), "get a fresh permutation of their values each call"));
  auto system = build_system_prompt(library(), sample_layernorm(), PromptKind::optimize);
  ASSERT_TRUE(system.ok()) << system.error().message;
  EXPECT_TRUE(contains(*system, norm)) << *system;
}

// `cutegen prompt` has no GPU: the measurements a run would show are labelled placeholders.
TEST(PromptBuild, GpuPlaceholdersAreLabelledWhereARunHasMeasurements) {
  PromptOptions o;
  o.gpu_placeholders = true;
  ProblemBrief p = sample_elementwise();
  auto system = build_system_prompt(library(), p, PromptKind::optimize, o);
  ASSERT_TRUE(system.ok()) << system.error().message;
  EXPECT_TRUE(contains(*system, "GPU: [measured on the GPU at run time: the GPU's name]")) << *system;
  EXPECT_TRUE(contains(*system, "Roofline floor on this GPU: [measured on the GPU at run time: the roofline floor"))
      << *system;
  EXPECT_TRUE(contains(*system, "PyTorch eager: [measured on the GPU at run time: eager PyTorch's median time]"));
  OptimizeInput opt{p, kKernel, 0, 1, 8, {}, ""};
  auto r = build_optimize_prompt(library(), opt, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(contains(*r, "Current best kernel (below): [measured on the GPU at run time: its median time]")) << *r;
  EXPECT_TRUE(contains(*r, "- Against torch.compile: [measured on the GPU at run time: the speedup].")) << *r;
}

// The guide as each class reads it: a pointwise op gets no TMA, wgmma or cluster material.
TEST(PromptLibrary, TheCuteGuideIsTrimmedToTheWorkloadClass) {
  const std::string& ew = library().cute_guide(WorkloadClass::elementwise);
  for (const char* absent : {"make_tma_copy", "wgmma", "map_shared_rank", "make_tiled_mma", "cp_async_fence",
                             "Swizzle<", "KernelTmaWarpSpecializedCooperative", "SM90_BULK_COPY_G2S", "<!--"})
    EXPECT_FALSE(contains(ew, absent)) << "elementwise guide has " << absent;
  for (const char* present : {"copy_aligned", "local_tile", "elem_less", "make_identity_tensor", "make_tiled_copy",
                              "**named** namespace", "## Common compile errors"})
    EXPECT_TRUE(contains(ew, present)) << "elementwise guide lacks " << present;
  const std::string& red = library().cute_guide(WorkloadClass::reduction);
  for (const char* present : {"map_shared_rank", "SM90_BULK_COPY_G2S", "cudaLaunchCooperativeKernel", "cp_async_fence"})
    EXPECT_TRUE(contains(red, present)) << "reduction guide lacks " << present;
  for (const char* absent : {"Layout_K_SW128_Atom", "make_tiled_mma", "3xTF32 split"})
    EXPECT_FALSE(contains(red, absent)) << "reduction guide has " << absent;
  const std::string& gemm = library().cute_guide(WorkloadClass::gemm);
  for (const char* present : {"make_tiled_mma", "wgmma", "make_tma_copy", "3xTF32 split", "Layout_K_SW128_Atom"})
    EXPECT_TRUE(contains(gemm, present)) << "gemm guide lacks " << present;
  EXPECT_FALSE(contains(gemm, "map_shared_rank"));
  EXPECT_LT(ew.size() * 2, gemm.size()) << "the pointwise guide is less than half the GEMM's";
}

TEST(PromptLibrary, GuideMarkersAreChecked) {
  auto bad_class = guide_for_class("<!-- for: gemm pointwise -->\n## X\ntext\n", WorkloadClass::gemm, "g.md");
  ASSERT_FALSE(bad_class.ok());
  EXPECT_TRUE(contains(bad_class.error().message, "g.md:1:")) << bad_class.error().message;
  EXPECT_TRUE(contains(bad_class.error().message, "pointwise")) << bad_class.error().message;
  auto stray = guide_for_class("<!-- for: gemm -->\ntext\n", WorkloadClass::gemm, "g.md");
  ASSERT_FALSE(stray.ok());
  EXPECT_TRUE(contains(stray.error().message, "right before a `## ` section or a `- ` item")) << stray.error().message;
  const std::string text =
      "# Guide\n## All\n- a\n<!-- for: gemm -->\n- b\n```\n- code\n```\n- c\n<!-- for: reduction -->\n## Red\n- d\n"
      "<!-- for: gemm -->\n- e\n## Last\n- f\n";
  EXPECT_EQ(*guide_for_class(text, WorkloadClass::gemm, "g"), "# Guide\n## All\n- a\n- b\n```\n- code\n```\n- c\n## Last\n- f\n");
  EXPECT_EQ(*guide_for_class(text, WorkloadClass::reduction, "g"), "# Guide\n## All\n- a\n- c\n## Red\n- d\n## Last\n- f\n");
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

TEST(PromptTruth, EveryCallShowsTheReferenceOnceInTheSystemMessage) {
  ProblemBrief p = sample_layernorm();
  OptimizeInput opt{p, kKernel, 0.1, 1, 8, {}, ""};
  RepairInput repair{p, kKernel, sample_failure(FailureKind::wrong_result), "DIAGNOSIS: x\nFIX: y\n", {}};
  RestartInput restart{p, "why", {}, std::nullopt};
  for (auto [kind, r] : {std::pair{PromptKind::synthesis, build_synthesis_prompt(library(), {p})},
                         std::pair{PromptKind::repair, build_repair_prompt(library(), repair)},
                         std::pair{PromptKind::optimize, build_optimize_prompt(library(), opt)},
                         std::pair{PromptKind::restart, build_restart_prompt(library(), restart)}}) {
    const std::string what(to_string(kind));
    ASSERT_TRUE(r.ok()) << what << ": " << r.error().message;
    EXPECT_FALSE(contains(*r, "self.norm = nn.LayerNorm(hidden)")) << what << " repeats the reference";
    const std::string w = whole(kind, p, *r);
    EXPECT_TRUE(contains(w, "```python\n" + problem_source_for_prompt(p.reference_source)))
        << what << " lacks the reference module";
    EXPECT_FALSE(contains(w, "registered BEFORE the LayerNorm")) << what << ": the docstring's maintainer notes";
    EXPECT_EQ(occurrences(w, "self.norm = nn.LayerNorm(hidden)"), 1) << what << ": the reference once";
    EXPECT_TRUE(contains(w, "Model(hidden=8192)")) << what;
  }
}

TEST(PromptTruth, TheOptimisePromptShowsEachBaselineAndTheFloorOnce) {
  OptimizeInput in{sample_layernorm(), kKernel, 0.1124, 2, 8, {}, ""};
  auto r = build_optimize_prompt(library(), in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string w = whole(PromptKind::optimize, in.problem, *r);
  EXPECT_EQ(occurrences(w, "0.2341 ms"), 1) << w;  // eager
  EXPECT_EQ(occurrences(w, "0.1877 ms"), 1) << w;  // torch.compile
  EXPECT_EQ(occurrences(w, "0.0562 ms"), 1) << w;  // the floor
  EXPECT_TRUE(contains(*r, "- Against PyTorch eager: the best kernel is 2.08x faster.")) << *r;
  EXPECT_TRUE(contains(*r, "- Against torch.compile: the best kernel is 1.67x faster.")) << *r;
  EXPECT_TRUE(contains(w, "269 MB")) << "bytes and FLOPs stay";
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
  EXPECT_TRUE(contains(whole(PromptKind::optimize, in.problem, *r), "It ends the optimisation without an evaluation"))
      << "what a decline costs is said once, with its format in the rules";
  EXPECT_TRUE(contains(whole(PromptKind::optimize, in.problem, *r), "NO_FURTHER_CHANGE: ")) << "the answer format is in the rules";
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
