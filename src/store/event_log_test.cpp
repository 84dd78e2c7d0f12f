#include "store/event_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"
#include "store/run_files.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {
using cutegen::testing::TempDir;
std::string slurp(const fs::path& p) { return *read_file(p); }
}  // namespace

TEST(EventLog, AppendsAndLoadsInOrder) {
  TempDir d;
  {
    auto log = EventLog::open(d.path / "task/events.jsonl");
    ASSERT_TRUE(log.ok()) << log.error().message;
    ASSERT_TRUE(log->append({{"type", "a"}, {"n", 1}}).ok());
    ASSERT_TRUE(log->append({{"type", "b"}, {"text", "line\nbreak"}}).ok());
  }
  auto loaded = load_event_log(d.path / "task/events.jsonl");
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->events.size(), 2u);
  EXPECT_EQ(loaded->events[1]["text"], "line\nbreak");
  EXPECT_FALSE(loaded->dropped_torn_tail);
  std::string text = slurp(d.path / "task/events.jsonl");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

TEST(EventLog, AMissingLogIsEmpty) {
  TempDir d;
  auto loaded = load_event_log(d.path / "none.jsonl");
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->events.empty());
}

TEST(EventLog, ATornLastLineIsDroppedAndRepairedBeforeAppending) {
  TempDir d;
  auto path = d.path / "events.jsonl";
  ASSERT_TRUE(write_file_atomic(path, "{\"type\":\"a\"}\n{\"type\":\"b\",\"x\":").ok());
  auto loaded = load_event_log(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->events.size(), 1u);
  EXPECT_TRUE(loaded->dropped_torn_tail);
  auto log = EventLog::open(path);
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log->append({{"type", "c"}}).ok());
  EXPECT_EQ(slurp(path), "{\"type\":\"a\"}\n{\"type\":\"c\"}\n");
}

TEST(EventLog, ALastLineThatParsesButLacksItsNewlineIsTornToo) {
  // What a short write leaves: the whole object, not its newline. open() cuts it, so loading must
  // drop it as well, or a resume would replay an event the log no longer holds.
  TempDir d;
  auto path = d.path / "events.jsonl";
  ASSERT_TRUE(write_file_atomic(path, "{\"type\":\"a\"}\n{\"type\":\"b\"}").ok());
  auto loaded = load_event_log(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->events.size(), 1u);
  EXPECT_TRUE(loaded->dropped_torn_tail);
  auto log = EventLog::open(path);
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log->append({{"type", "c"}}).ok());
  auto reloaded = load_event_log(path);
  ASSERT_TRUE(reloaded.ok());
  ASSERT_EQ(reloaded->events.size(), 2u);
  EXPECT_EQ(reloaded->events[1]["type"], "c");
}

TEST(EventLog, CorruptionBeforeTheEndIsAnErrorNamingTheLine) {
  TempDir d;
  auto path = d.path / "events.jsonl";
  ASSERT_TRUE(write_file_atomic(path, "{\"type\":\"a\"}\nnot json\n{\"type\":\"b\"}\n").ok());
  auto loaded = load_event_log(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("events.jsonl:2"), std::string::npos) << loaded.error().message;
}

TEST(RunFiles, WritesInsideTheRunDirectoryOnly) {
  TempDir d;
  RunFiles files(d.path);
  ASSERT_TRUE(files.write("steps/001-synthesize/prompt.md", "hello").ok());
  EXPECT_EQ(slurp(d.path / "steps/001-synthesize/prompt.md"), "hello");
  auto escape = files.write("../outside.txt", "x");
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.error().message.find("leaves the run directory"), std::string::npos);
  EXPECT_FALSE(files.write("/etc/passwd", "x").ok());
}
