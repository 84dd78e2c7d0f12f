#include "runlog/run_history.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

// The report fixture's run (report/testdata/README.md): a synthesis that needed a repair, step 1
// kept, step 2 slower, step 3 broke the kernel and was undone, step 4 kept, profiles from step 2.
// The format-2 copy is that run as the cutegen before typed events logged it.
const fs::path kV2 = fs::path(CUTEGEN_RUNLOG_TESTDATA) / "relu-run-v2.jsonl";
const fs::path kV3 = fs::path(CUTEGEN_REPORT_TESTDATA) / "relu-run/events.jsonl";

void expect_the_relu_run(const RunHistory& h, const std::string& example) {
  ASSERT_TRUE(h.problem);
  EXPECT_EQ(h.problem->name(), "relu");
  EXPECT_EQ(h.example_shown, example);  // the format-3 recording is newer: the example choice changed since
  std::vector<std::string> labels, fates;
  std::vector<int> artifacts;
  for (const auto& a : h.attempts) {
    labels.push_back(a.label.text());
    fates.push_back(std::string(to_string(a.fate)));
    artifacts.push_back(a.artifact);
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"synthesis", "synthesis-repair1", "step1", "step2", "step3", "step4"}));
  EXPECT_EQ(fates, (std::vector<std::string>{"failed", "accepted", "accepted", "rolled back", "failed", "accepted"}));
  // The step directories the loop wrote (report/testdata/relu-run/steps/).
  EXPECT_EQ(artifacts, (std::vector<int>{2, 5, 7, 9, 11, 15}));
  EXPECT_EQ(h.best, 6);
  EXPECT_EQ(h.rolled_back(), std::vector<int>{4});
  EXPECT_EQ(h.syntheses, 1);
  ASSERT_EQ(h.steps.size(), 4u);
  EXPECT_EQ(h.steps[1].record.outcome, StepOutcome::slower);
  EXPECT_EQ(h.steps[1].attempts, std::vector<int>{4});
  EXPECT_EQ(h.steps[1].base, 3);  // step 2 started from step 1's kernel
  EXPECT_EQ(h.steps[2].record.outcome, StepOutcome::undone);
  EXPECT_EQ(h.steps[3].base, 3);  // step 4 too: steps 2 and 3 were rolled back
  ASSERT_EQ(h.profiles.size(), 1u);
  EXPECT_EQ(h.profiles[0].first_step, 2);
  EXPECT_EQ(h.profiles[0].kernel, 3);
  ASSERT_TRUE(h.stop);
  EXPECT_EQ(h.stop->reason, "steps");
  EXPECT_EQ(h.summary_line(), fmt::format("6 evaluations, 4 steps decided; best: step4 ({:.4g} ms); rolled back: step2",
                                          h.attempts[5].evaluation.median_ms()));
}

}  // namespace

TEST(RunHistory, ReadsAFormat2Log) {
  auto log = read_run_log(kV2);
  ASSERT_TRUE(log.ok()) << log.error().message;
  for (const auto& e : log->events) EXPECT_EQ(e.format, 2);
  expect_the_relu_run(run_history(log->events), "examples/kernels/relu_vec.cu");
}

TEST(RunHistory, ReadsAFormat3Log) {
  auto log = read_run_log(kV3);
  ASSERT_TRUE(log.ok()) << log.error().message;
  for (const auto& e : log->events) EXPECT_EQ(e.format, 3);
  expect_the_relu_run(run_history(log->events), "library/elementwise.cu");
}

TEST(RunHistory, AnUnfinishedRunHasNoStopAndItsUndecidedKernelIsNotTheBest) {
  auto log = read_run_log(kV3);
  ASSERT_TRUE(log.ok());
  // Cut after step 4's evaluation, before its decision.
  auto events = log->events;
  while (!std::holds_alternative<EvalEvent>(events.back().event)) events.pop_back();
  RunHistory h = run_history(events);
  EXPECT_FALSE(h.stop);
  EXPECT_EQ(h.best, 3);
  EXPECT_EQ(h.steps.size(), 3u);
  EXPECT_EQ(h.attempts.back().fate, AttemptFate::rolled_back);
}

TEST(RunLog, ALineOfAnotherFormatIsRefusedNamingItsLine) {
  cutegen::testing::TempDir d;
  auto text = *read_file(kV2);
  auto first_end = text.find('\n');
  std::string edited = text.substr(0, first_end + 1);
  auto second = nlohmann::json::parse(text.substr(first_end + 1, text.find('\n', first_end + 1) - first_end - 1));
  second["v"] = 9;
  edited += second.dump() + "\n";
  ASSERT_TRUE(write_file_atomic(d.path / "events.jsonl", edited).ok());
  auto log = read_run_log(d.path / "events.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.error().kind, ErrorKind::cannot_resume);
  EXPECT_NE(log.error().message.find("events.jsonl:2 was written by another cutegen (run log format 9; this one reads "
                                     "formats 2 to 3)"),
            std::string::npos)
      << log.error().message;
}
