// What the loop's conversations cost in input tokens, estimated offline (bytes / 4, the usual rule of
// thumb for English and code; the providers' tokenizers land within ~15% of it on these prompts).
// Two shapes the issue tracker measured on a GPU: one optimise call for a pointwise problem, and an
// 8-step run on a KernelBench-size softmax (synthesis, one diagnose + repair, eight optimise steps).
#include <gtest/gtest.h>

#include <map>

#include <fmt/format.h>

#include "agent/template_prompter.h"
#include "common/fs.h"

using namespace cutegen;

// Named, not anonymous: the agent tests build as one unity translation unit.
namespace prompt_size {

long long estimate_tokens(const std::vector<Message>& messages) {
  long long bytes = 0;
  for (const auto& m : messages) bytes += static_cast<long long>(m.text.size());
  return (bytes + 3) / 4;
}

std::string source_file(const std::string& relative) {
  auto text = read_file(std::string(CUTEGEN_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(text.ok()) << relative;
  return text.ok() ? *text : std::string();
}

ProblemInfo relu_problem() {
  ProblemInfo p;
  p.source = source_file("problems/relu.py");
  p.facts = *ProblemFacts::from_json(nlohmann::json::parse(R"({"name": "relu", "workload_class": "elementwise",
    "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [4096, 65536]}],
    "params": [], "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [4096, 65536]}],
    "aten_ops": ["aten::relu"], "dtype": "float32",
    "gpu": "NVIDIA H200", "min_bytes": 2147483648, "flops": 268435456})"));
  p.baselines.eager = BaselineTime{TimeStats{.median_ms = 0.61}, ""};
  p.baselines.compile = BaselineTime{TimeStats{.median_ms = 0.60}, ""};
  p.floor = Floor{.floor_ms = 0.45, .bound = "memory"};
  return p;
}

// KernelBench level 1, 23_Softmax: 4096 rows of 393216 fp32 values.
ProblemInfo softmax_problem() {
  ProblemInfo p;
  p.source =
      "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    \"\"\"\n    Simple model that performs a "
      "Softmax activation.\n    \"\"\"\n    def __init__(self):\n        super(Model, self).__init__()\n\n    def "
      "forward(self, x: torch.Tensor) -> torch.Tensor:\n        \"\"\"\n        Applies Softmax activation to the "
      "input tensor.\n        \"\"\"\n        return torch.softmax(x, dim=1)\n\nbatch_size = 4096\ndim = 393216\n\n"
      "def get_inputs():\n    x = torch.rand(batch_size, dim)\n    return [x]\n\ndef get_init_inputs():\n    return "
      "[]  # No special initialization inputs needed\n";
  p.facts = *ProblemFacts::from_json(nlohmann::json::parse(R"({"name": "23_Softmax", "workload_class": "reduction",
    "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [4096, 393216]}],
    "params": [], "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [4096, 393216]}],
    "aten_ops": ["aten::_softmax"], "dtype": "float32",
    "gpu": "NVIDIA H200", "min_bytes": 12884901888, "flops": 8053063680})"));
  p.baselines.eager = BaselineTime{TimeStats{.median_ms = 5.12}, ""};
  p.baselines.compile = BaselineTime{TimeStats{.median_ms = 4.87}, ""};
  p.floor = Floor{.floor_ms = 2.68, .bound = "memory"};
  return p;
}

// A profile summary of the size the profile stage writes (about 30 lines).
std::string sample_profile() {
  std::string s =
      "Nsight Compute profile: 2 kernels, 2 launches over 1 call; 3.41 ms kernel time per call (clocks unlocked, "
      "caches flushed per launch)\nRoofline: 12.9 GB moved, 8.05 GFLOP; floor 2.68 ms (memory-bound); 78.6% of "
      "speed-of-light\n";
  for (int i = 0; i < 28; ++i)
    s += fmt::format("  line {} of the kernel detail: throughput, caches, occupancy, pipes, access widths\n", i);
  return s;
}

Evaluation passing(double ms) {
  Evaluation e;
  e.time = CandidateTime{.stats = {.median_ms = ms}};
  return e;
}

Evaluation compile_failure() {
  Evaluation e;
  e.verdict = Verdict::compile_error;
  e.reason = "3 compile errors";
  for (int i = 0; i < 12; ++i)
    e.evidence += fmt::format("[{}] kernel.cu:{}: static assertion failed with \"Mismatched Ranks\"\n", i, 40 + i);
  return e;
}

std::vector<Message> conversation(TemplatePrompter& prompter, const ProblemInfo& problem, PromptKind kind,
                                  const std::string& prompt) {
  auto system = prompter.system_prompt(problem, kind);
  EXPECT_TRUE(system.ok()) << system.error().message;
  return request_messages(system.ok() ? *system : std::string(), prompt);
}

StepRecord step(int n, bool accepted) {
  StepRecord r{.kind = StepKind::optimization, .n = n};
  r.idea = fmt::format("{}. a menu item applied to the row loop, with a knob for its width", n);
  r.outcome = accepted ? StepOutcome::accepted : StepOutcome::slower;
  r.time_ms = accepted ? 3.4 - 0.1 * n : 3.6;
  return r;
}

// Input tokens of one optimise call on relu, at step 3 with the profile shown.
long long pointwise_optimize_tokens(TemplatePrompter& prompter) {
  const ProblemInfo p = relu_problem();
  auto prompt = prompter.optimize(p, source_file("attacks/honest/relu_vec.cu"), passing(0.50),
                                  {step(1, true), step(2, false)}, sample_profile(), 3, 8);
  EXPECT_TRUE(prompt.ok()) << prompt.error().message;
  return estimate_tokens(conversation(prompter, p, PromptKind::optimize, *prompt));
}

struct RunTokens {
  long long total = 0;
  // The system message of every call after the first of its kind: what a provider's prompt cache
  // serves while the run's calls come within its lifetime (Anthropic: 5 minutes, refreshed by each hit).
  long long cacheable = 0;
  std::map<PromptKind, long long> by_kind;  // all of each kind's calls, both messages
  std::string calls;                        // one line per call: kind, system and user tokens
};

// The 8-step softmax run: synthesis, a compile error diagnosed and repaired, eight optimise steps (the
// profile from step 3, the reduction class's first profiled step), the history growing by a step each.
RunTokens softmax_run_tokens(TemplatePrompter& prompter) {
  const ProblemInfo p = softmax_problem();
  const std::string kernel = source_file("library/softmax_split_rows.cu");
  RunTokens t;
  std::map<PromptKind, std::string> seen;  // each kind's system message, as the provider last saw it
  auto add = [&](PromptKind kind, const Result<std::string>& prompt) {
    EXPECT_TRUE(prompt.ok()) << (prompt.ok() ? "" : prompt.error().message);
    if (!prompt.ok()) return;
    const auto messages = conversation(prompter, p, kind, *prompt);
    const long long system = estimate_tokens({messages.front()}), user = estimate_tokens({messages.back()});
    auto [at, first] = seen.emplace(kind, messages.front().text);
    if (!first) {
      EXPECT_EQ(at->second, messages.front().text) << to_string(kind) << ": the fixed prefix changed within the run";
      t.cacheable += system;
    }
    t.total += system + user;
    t.by_kind[kind] += system + user;
    t.calls += fmt::format("  {:<9} system ~{:>5}  user ~{:>5}\n", to_string(kind), system, user);
  };
  add(PromptKind::synthesis, prompter.synthesis(p));
  add(PromptKind::diagnose, prompter.diagnose(p, kernel, compile_failure(), {}));
  add(PromptKind::repair, prompter.repair(p, kernel, compile_failure(),
                                          "DIAGNOSIS: line 42 slices a rank-2 tensor with three coordinates.\n"
                                          "LOCATION: line 42.\nFIX: slice with two.",
                                          {}));
  std::vector<StepRecord> history;
  for (int s = 1; s <= 8; ++s) {
    add(PromptKind::optimize, prompter.optimize(p, kernel, passing(3.4), history, s >= 3 ? sample_profile() : "", s, 8));
    history.push_back(step(s, s % 2 == 1));
  }
  return t;
}

}  // namespace prompt_size

using namespace prompt_size;

// Measured with this test on the prompts before they were made cache-friendly (commit "Prompt size
// test: ..."): the rules, guide and contract after the kernel, the full guide for every class.
constexpr long long kPointwiseOptimiseBefore = 11530;
constexpr long long kSoftmaxRunBefore = 145241;
// And with one system message for every call of a run (rules, class guide, menu, problem): the
// numbers issue 36 set the 60k target against.
constexpr long long kPointwiseOptimiseOneSystem = 8645;
constexpr long long kSoftmaxRunOneSystem = 135603;

TEST(PromptSize, ReportsTheInputTokensOfAPointwiseOptimiseCallAndAnEightStepSoftmaxRun) {
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  auto paper = TemplatePrompter::create({.show_example = false});
  ASSERT_TRUE(paper.ok()) << paper.error().message;
  const long long pointwise = pointwise_optimize_tokens(**prompter);
  const RunTokens softmax = softmax_run_tokens(**prompter);
  const RunTokens scratch = softmax_run_tokens(**paper);
  std::printf("pointwise optimise call: ~%lld input tokens (one system message: ~%lld; before: ~%lld)\n", pointwise,
              kPointwiseOptimiseOneSystem, kPointwiseOptimiseBefore);
  std::printf("8-step softmax run: ~%lld input tokens over 11 calls (one system message: ~%lld; before: ~%lld); ~%lld "
              "of them (%.0f%%) a repeated system message a prompt cache serves\n%s",
              softmax.total, kSoftmaxRunOneSystem, kSoftmaxRunBefore, softmax.cacheable,
              100.0 * softmax.cacheable / softmax.total, softmax.calls.c_str());
  std::printf("the same run with --examples none (the paper's setting): ~%lld input tokens, ~%lld (%.0f%%) cached\n",
              scratch.total, scratch.cacheable, 100.0 * scratch.cacheable / scratch.total);
  // An optimise call carries the menu, not the CuTe guide, and the rules an edit can break.
  EXPECT_LT(pointwise * 4, kPointwiseOptimiseOneSystem * 3);
  // Issue 36's target is 60k; the floor under these prompts is analysed in docs/prompts.md. What this
  // holds: the run stays 30% below the one-system-message layout.
  EXPECT_LT(softmax.total * 10, kSoftmaxRunOneSystem * 7);
  EXPECT_LT(scratch.total, softmax.total) << "the paper's setting shows no library kernel";
  EXPECT_GT(softmax.cacheable, 0);
}

// The fixed part first: every call of one kind in a problem's run starts with the same bytes — that
// kind's system message, whole — in the text the exec backend's command reads and in the messages an
// API receives.
TEST(PromptCache, SuccessiveCallsOfOneKindShareItsSystemMessageAsAPrefix) {
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  auto& pr = **prompter;
  const ProblemInfo p = relu_problem();
  const std::string kernel = source_file("attacks/honest/relu_vec.cu");
  Evaluation mismatch;
  mismatch.verdict = Verdict::mismatch;
  mismatch.reason = "4096 of 268435456 elements bad";
  const std::map<PromptKind, std::vector<Result<std::string>>> calls = {
      {PromptKind::synthesis, {pr.synthesis(p), pr.synthesis(p)}},
      {PromptKind::restart, {pr.restart(p, {{"no usable kernel", std::nullopt}}),
                             pr.restart(p, {{"no usable kernel", std::nullopt}, {"mismatch", mismatch}})}},
      {PromptKind::diagnose, {pr.diagnose(p, kernel, compile_failure(), {}), pr.diagnose(p, kernel, mismatch, {})}},
      {PromptKind::repair, {pr.repair(p, kernel, compile_failure(), "DIAGNOSIS: a\nFIX: b", {}),
                            pr.repair(p, kernel, mismatch, "DIAGNOSIS: c\nFIX: d", {})}},
      {PromptKind::optimize, {pr.optimize(p, kernel, prompt_size::passing(0.5), {}, "", 1, 8),
                              pr.optimize(p, kernel, prompt_size::passing(0.49), {step(1, true)}, sample_profile(), 2, 8)}}};
  auto common_prefix = [](const std::string& a, const std::string& b) {
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
  };
  for (const auto& [kind, prompts] : calls) {
    auto system = pr.system_prompt(p, kind);
    ASSERT_TRUE(system.ok()) << system.error().message;
    std::vector<std::vector<Message>> sent;
    for (const auto& prompt : prompts) {
      ASSERT_TRUE(prompt.ok()) << prompt.error().message;
      sent.push_back(conversation(pr, p, kind, *prompt));
    }
    for (std::size_t i = 1; i < sent.size(); ++i) {
      ASSERT_EQ(sent[i].front().role, Role::system);
      EXPECT_TRUE(sent[i].front().cache_prefix) << "the system message is marked as the cacheable prefix";
      EXPECT_FALSE(sent[i].back().cache_prefix);
      EXPECT_EQ(sent[i].front().text, *system) << to_string(kind);
      if (kind != PromptKind::synthesis)  // a synthesis asked again is the same request
        EXPECT_NE(sent[i].back().text, sent[i - 1].back().text) << to_string(kind) << ": the calls differ after it";
      const std::string previous = render_as_text(sent[i - 1]), current = render_as_text(sent[i]);
      EXPECT_GE(common_prefix(previous, current), system->size()) << to_string(kind) << " call " << i;
    }
  }
}
