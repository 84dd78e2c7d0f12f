// `--resume` and the reports read a run's history the same way (runlog/run_history.h): a resumed run
// arrives at the kernel the run view calls the best, with the same kernels rolled back, wherever the
// first run was stopped; and a replay that arrives elsewhere is refused.
#include <gtest/gtest.h>

#include "agent/loop.h"
#include "agent/testdata/loop_fakes.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/testdata/test_helpers.h"
#include "report/run_view.h"

using namespace cutegen;
using namespace cutegen::testing;
namespace fs = std::filesystem;

// Named, not anonymous: the unity build shares one translation unit with loop_test.cpp.
namespace resume_agreement {

std::string kernel(const std::string& markers) {
  return "#include <cutegen/kernel.h>\n" + markers +
         "extern \"C\" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out,\n"
         "                                 int32_t n_out, cudaStream_t stream) {\n  return 0;\n}\n";
}
std::string optimize(const std::string& idea, const std::string& from, const std::string& to) {
  return "OPTIMIZATION: " + idea + "\nEXPECTED: faster\n\n```\n<<<<<<< SEARCH\n" + from + "=======\n" + to +
         ">>>>>>> REPLACE\n```\n";
}

// synthesis 1.0 ms; step 1 kept (0.5); step 2 slower (0.8), rolled back; step 3 kept (0.3).
const std::vector<std::pair<std::string, std::string>> kTurns = {
    {"synthesis", "PLAN: plain\n```cuda\n" + kernel("// TIME: 1.0\n") + "```\n"},
    {"optimize", optimize("vectorize", "// TIME: 1.0\n", "// TIME: 0.5\n")},
    {"optimize", optimize("unroll", "// TIME: 0.5\n", "// TIME: 0.8\n")},
    {"optimize", optimize("streaming stores", "// TIME: 0.5\n", "// TIME: 0.3\n")},
};

struct ScriptedRun {
  TempDir dir;
  MarkerEvaluator evaluator;
  FakePrompter prompter;
  LoopOptions options{.max_steps = 3};

  // Scripts the answers from `from_turn` on (the earlier ones are in the log) and runs the loop.
  Result<LoopResult> run(bool resume, std::size_t from_turn = 0) {
    auto backend = std::make_unique<ScriptedLlm>();
    for (std::size_t t = from_turn; t < kTurns.size(); ++t) backend->add(kTurns[t].first, kTurns[t].second);
    auto client = LlmClient::create(std::move(backend), PriceTable{}, {});
    if (!client) return client.error();
    auto journal = Journal::open(dir.path / "events.jsonl", resume);
    if (!journal) return journal.error();
    RunFiles files(dir.path);
    Loop loop(**client, evaluator, prompter, nullptr, *journal, files, options);
    return loop.run();
  }
};

std::vector<std::string> log_lines(const fs::path& events) {
  std::vector<std::string> lines;
  std::string text = *read_file(events);
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

}  // namespace resume_agreement

using namespace resume_agreement;

TEST(ResumeAndRunView, AgreeOnTheBestAndTheRolledBackWhereverTheRunWasStopped) {
  ScriptedRun full;
  auto expected = full.run(false);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  const auto lines = log_lines(full.dir.path / "events.jsonl");
  for (std::size_t keep = 1; keep <= lines.size(); ++keep) {
    ScriptedRun r;
    std::string text;
    std::size_t answered = 0;
    for (std::size_t i = 0; i < keep; ++i) {
      text += lines[i] + "\n";
      answered += lines[i].find("\"type\":\"llm\"") != std::string::npos;
    }
    ASSERT_TRUE(write_file_atomic(r.dir.path / "events.jsonl", text).ok());
    auto resumed = r.run(true, answered);
    ASSERT_TRUE(resumed.ok()) << "keep " << keep << ": " << resumed.error().message;
    ASSERT_TRUE(resumed->best);

    auto view = load_run_view(r.dir.path);
    ASSERT_TRUE(view.ok()) << view.error().message;
    auto reopened = Journal::open(r.dir.path / "events.jsonl", true);
    ASSERT_TRUE(reopened.ok());
    const RunHistory& history = reopened->logged_history();
    ASSERT_TRUE(view->best_attempt && history.best);
    // The loop's best, the history's and the view's are one kernel: step 3's.
    EXPECT_EQ(view->attempt(*view->best_attempt)->source_sha256, sha256_hex(resumed->best->source)) << keep;
    EXPECT_EQ(history.best_attempt()->source_sha256, sha256_hex(resumed->best->source)) << keep;
    EXPECT_EQ(history.best_attempt()->label.text(), "step3") << keep;
    std::vector<int> view_rolled_back;
    for (const auto& a : view->attempts)
      if (a.fate == AttemptFate::rolled_back) view_rolled_back.push_back(a.index);
    EXPECT_EQ(view_rolled_back, history.rolled_back()) << keep;
    ASSERT_EQ(history.rolled_back().size(), 1u);
    EXPECT_EQ(history.attempt(history.rolled_back()[0])->label.text(), "step2");
    EXPECT_EQ(resumed->history.at(1).outcome, StepOutcome::slower);
  }
}

TEST(ResumeAndRunView, AReplayThatArrivesAtAnotherBestThanTheHistoryIsRefused) {
  ScriptedRun full;
  ASSERT_TRUE(full.run(false).ok());
  // Step 3's evaluation relabelled as another step's: the replay still makes it the best (the journal
  // matches evaluations by the kernel's hash), but the history no longer gives it to step 3, whose
  // decision then keeps step 1's kernel.
  std::string text;
  for (std::string line : log_lines(full.dir.path / "events.jsonl")) {
    if (line.find("\"what\":\"step3\"") != std::string::npos) {
      auto j = nlohmann::json::parse(line);
      j["what"] = "step7";
      j["attempt"]["step"] = 7;
      line = j.dump();
    }
    text += line + "\n";
  }
  ASSERT_TRUE(write_file_atomic(full.dir.path / "events.jsonl", text).ok());
  auto r = full.run(true, kTurns.size());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::cannot_resume);
  EXPECT_NE(r.error().message.find("as the best kernel, but its history names attempt"), std::string::npos)
      << r.error().message;
}
