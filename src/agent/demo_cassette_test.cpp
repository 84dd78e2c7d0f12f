// The demo cassette in examples/cassettes/relu-demo drives the real loop, the real prompt files and
// the real cassette replay; only the judge is scripted (by which kernel version it is shown). This
// is the CPU half of the demo: the anchors of every edit apply to the kernels the loop really holds,
// and the loop walks compile error -> diagnosis -> repair -> correct -> one accepted and one rolled-
// back optimisation. scripts/gpu-check runs the same cassette on an H200 with the real judge.
#include <gtest/gtest.h>

#include "agent/loop.h"
#include "agent/template_prompter.h"
#include "common/fs.h"
#include "common/json_text.h"
#include "common/process.h"
#include "llm/backend_factory.h"
#include "llm/curl_transport.h"
#include "llm/testdata/fake_backend.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

// Versions of the demo kernel, told apart by what each edit introduced.
class DemoJudge : public Evaluator {
 public:
  Result<ProblemInfo> describe() override {
    ProblemInfo p;
    p.source = *read_file(std::string(CUTEGEN_SOURCE_DIR) + "/problems/relu.py");
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
  Result<std::string> fingerprint() override { return std::string("relu-demo"); }
  Result<Evaluation> evaluate(const std::string& source, const std::string&, std::optional<double>) override {
    if (interrupt_at && seen.size() + 1 == interrupt_at) return Error{"interrupted (SIGINT)"};
    seen.push_back(source);
    Evaluation e;
    if (source.find("gX(_, _, t)") != std::string::npos) {
      e.verdict = Verdict::compile_error;
      e.reason = "22 compile errors";
      e.evidence = "[1] kernel.cu:24: static assertion failed with \"Mismatched Ranks\"";
      return e;
    }
    bool vectorized = source.find("copy_aligned") != std::string::npos;
    bool small_ctas = source.find("kThreads = 64") != std::string::npos;
    e.time = CandidateTime{.stats = {.median_ms = vectorized && !small_ctas ? 0.50 : 3.0, .iqr_ms = 0.005}};
    return e;
  }
  Result<Library> rebuild_library(const std::string&, const std::string&) override {
    return Error{"the demo judge builds no libraries"};
  }
  // The demo runs one candidate per step: no compile or screening alone.
  Result<std::optional<Evaluation>> compile(const std::string&, const std::string&) override {
    return Error{"the demo judge has no compile of its own (the demo runs one candidate per step)"};
  }
  Result<Evaluation> screen(const std::string&, const std::string&) override {
    return Error{"the demo judge has no screening (the demo runs one candidate per step)"};
  }
  std::vector<std::string> seen;
  size_t interrupt_at = 0;  // the evaluation (1-based) that ends the run as Ctrl-C would; 0: none
};

const fs::path kDemo = fs::path(CUTEGEN_SOURCE_DIR) / "examples/cassettes/relu-demo";

std::vector<std::string> demo_entries() {
  std::vector<std::string> names;
  std::string order = *read_file(kDemo / "match-in-order");
  for (std::size_t pos = 0; pos < order.size();) {
    std::size_t nl = order.find('\n', pos);
    if (nl == std::string::npos) nl = order.size();
    if (nl > pos) names.push_back(order.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return names;
}

}  // namespace

// The cassette holds the whole conversation of each call, as the loop sends it today: readable without
// a GPU, and a review of a prompt change shows in its diff. The demo judge's numbers are fixed, so the
// prompts are too. After a deliberate prompt change, rewrite them with
//   CUTEGEN_UPDATE_DEMO_CASSETTE=1 build/src/agent_tests --gtest_filter=DemoCassette.StoresTheFullPrompts*
TEST(DemoCassette, StoresTheFullPromptsTheLoopSends) {
  auto fake = std::make_shared<FakeLlmBackend>();
  const std::vector<std::string> entries = demo_entries();
  ASSERT_EQ(entries.size(), 5u);
  std::vector<nlohmann::json> recorded;
  for (const auto& name : entries) {
    recorded.push_back(nlohmann::json::parse(*read_file(kDemo / name)));
    fake->answer(recorded.back()["response"]["text"].get<std::string>());
  }
  auto client = make_fake_client(fake);
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-demo-prompts-");
  ASSERT_TRUE(dir.ok());
  DemoJudge judge;
  auto journal = Journal::open(*dir / "events.jsonl", false);
  ASSERT_TRUE(journal.ok());
  RunFiles files(*dir);
  LoopOptions options;
  options.max_steps = 2;
  options.profile = *ProfilePolicy::parse("never");
  Loop loop(**client, judge, **prompter, nullptr, *journal, files, options);
  auto result = loop.run();
  ASSERT_TRUE(result.ok()) << result.error().message;
  const auto requests = fake->requests();
  ASSERT_EQ(requests.size(), entries.size());
  const bool update = std::getenv("CUTEGEN_UPDATE_DEMO_CASSETTE") != nullptr;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json sent = to_json(requests[i].messages);
    if (update) {
      recorded[i]["request"]["messages"] = sent;
      ASSERT_TRUE(write_file_atomic(kDemo / entries[i], dump_json(recorded[i], 2) + "\n").ok());
      continue;
    }
    EXPECT_EQ(recorded[i]["request"]["messages"], sent)
        << entries[i] << " does not hold the prompt the loop sends; after a deliberate prompt change run "
        << "CUTEGEN_UPDATE_DEMO_CASSETTE=1 build/src/agent_tests --gtest_filter=DemoCassette.StoresTheFullPrompts*";
    EXPECT_TRUE(requests[i].messages.front().cache_prefix) << "the system message is the cacheable prefix";
  }
  fs::remove_all(*dir);
}

TEST(DemoCassette, ReluDemoWalksEveryPhaseOfTheLoop) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-demo-");
  ASSERT_TRUE(dir.ok());
  LlmConfig config;
  ASSERT_TRUE(apply_llm_spec(config, std::string("replay:") + CUTEGEN_SOURCE_DIR + "/examples/cassettes/relu-demo").ok());
  CurlTransport http;
  PosixProcessRunner runner;
  auto client = make_llm_client(config, BackendDeps{http, runner});
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  DemoJudge judge;
  auto journal = Journal::open(*dir / "events.jsonl", false);
  ASSERT_TRUE(journal.ok());
  RunFiles files(*dir);
  LoopOptions options;
  options.max_steps = 2;
  options.profile = *ProfilePolicy::parse("never");
  Loop loop(**client, judge, **prompter, nullptr, *journal, files, options);
  auto result = loop.run();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->stop_reason, "steps");
  ASSERT_TRUE(result->best);
  EXPECT_DOUBLE_EQ(result->best->evaluation.median_ms(), 0.50);
  ASSERT_EQ(result->history.size(), 2u);
  EXPECT_EQ(result->history[0].outcome, StepOutcome::accepted);
  EXPECT_EQ(result->history[1].outcome, StepOutcome::slower);
  EXPECT_EQ(result->llm_calls, 5);  // synthesis, diagnose, repair, two optimisations: no retries
  ASSERT_EQ(judge.seen.size(), 4u);  // broken, repaired, vectorized, small CTAs
  EXPECT_NE(judge.seen[1].find("gX(_, t)"), std::string::npos);
  EXPECT_NE(result->best->source.find("kThreads = 256"), std::string::npos);  // the rolled-back step left no trace
  fs::remove_all(*dir);
}

// Ctrl-C during the repaired kernel's evaluation, then --resume with a fresh cassette backend: the
// resumed run takes its first three answers from its log, so the cassette must answer its next
// question (the first optimisation) with the entry recorded for it, not with the synthesis entry.
TEST(DemoCassette, AnInterruptedReplayedRunResumesToTheSameEnd) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-demo-");
  ASSERT_TRUE(dir.ok());
  LlmConfig config;
  ASSERT_TRUE(apply_llm_spec(config, std::string("replay:") + CUTEGEN_SOURCE_DIR + "/examples/cassettes/relu-demo").ok());
  CurlTransport http;
  PosixProcessRunner runner;
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  LoopOptions options;
  options.max_steps = 2;
  options.profile = *ProfilePolicy::parse("never");
  {
    auto client = make_llm_client(config, BackendDeps{http, runner});
    ASSERT_TRUE(client.ok()) << client.error().message;
    DemoJudge judge;
    judge.interrupt_at = 2;  // the repaired kernel's evaluation
    auto journal = Journal::open(*dir / "events.jsonl", false);
    ASSERT_TRUE(journal.ok());
    RunFiles files(*dir);
    Loop loop(**client, judge, **prompter, nullptr, *journal, files, options);
    auto result = loop.run();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("interrupted"), std::string::npos) << result.error().message;
  }
  auto client = make_llm_client(config, BackendDeps{http, runner});
  ASSERT_TRUE(client.ok()) << client.error().message;
  DemoJudge judge;
  auto journal = Journal::open(*dir / "events.jsonl", true);
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  RunFiles files(*dir);
  Loop loop(**client, judge, **prompter, nullptr, *journal, files, options);
  auto result = loop.run();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->stop_reason, "steps");
  ASSERT_TRUE(result->best);
  EXPECT_DOUBLE_EQ(result->best->evaluation.median_ms(), 0.50);
  ASSERT_EQ(result->history.size(), 2u);
  EXPECT_EQ(result->history[0].outcome, StepOutcome::accepted);
  fs::remove_all(*dir);
}

// A replayed run whose optimisation answer is NO_FURTHER_CHANGE: the demo's first three answers, then
// a decline recorded as a cassette entry. The loop stops optimising there without an evaluation, and
// the run log says why.
TEST(DemoCassette, AReplayedDeclineStopsOptimisingWithoutAnEvaluation) {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-decline-");
  ASSERT_TRUE(dir.ok());
  const fs::path demo = fs::path(CUTEGEN_SOURCE_DIR) / "examples/cassettes/relu-demo";
  const fs::path cassette = *dir / "cassette";
  fs::create_directories(cassette);
  for (const char* entry : {"01-synthesize.json", "02-diagnose.json", "03-repair.json"})
    fs::copy_file(demo / entry, cassette / entry);
  auto optimize = nlohmann::json::parse(*read_file(demo / "04-optimize.json"));
  optimize["hash"] = "decline-04";
  optimize["response"]["text"] =
      "The kernel is a plain grid-stride copy at the memory floor's order.\n\n"
      "NO_FURTHER_CHANGE: one 4-byte load per thread already saturates the test's judge; nothing left to try\n";
  ASSERT_TRUE(write_file_atomic(cassette / "04-decline.json", dump_json(optimize, 2)).ok());
  ASSERT_TRUE(write_file_atomic(cassette / "match-in-order",
                                "01-synthesize.json\n02-diagnose.json\n03-repair.json\n04-decline.json\n")
                  .ok());

  LlmConfig config;
  ASSERT_TRUE(apply_llm_spec(config, "replay:" + cassette.string()).ok());
  CurlTransport http;
  PosixProcessRunner runner;
  auto client = make_llm_client(config, BackendDeps{http, runner});
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto prompter = TemplatePrompter::create();
  ASSERT_TRUE(prompter.ok()) << prompter.error().message;
  DemoJudge judge;
  auto journal = Journal::open(*dir / "run/events.jsonl", false);
  ASSERT_TRUE(journal.ok());
  RunFiles files(*dir / "run");
  LoopOptions options;
  options.max_steps = 5;
  options.profile = *ProfilePolicy::parse("never");
  Loop loop(**client, judge, **prompter, nullptr, *journal, files, options);
  auto result = loop.run();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->stop_reason, "declined");
  EXPECT_EQ(result->stop_detail, "one 4-byte load per thread already saturates the test's judge; nothing left to try");
  EXPECT_EQ(judge.seen.size(), 2u) << "the broken and the repaired kernel; the decline is not evaluated";
  EXPECT_EQ(result->llm_calls, 4);
  ASSERT_EQ(result->history.size(), 1u);
  EXPECT_EQ(result->history[0].outcome, StepOutcome::declined);
  EXPECT_EQ(result->example_shown, "library/elementwise.cu");
  fs::remove_all(*dir);
}
