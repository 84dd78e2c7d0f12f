#include "store/run_dir.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {
using cutegen::testing::contains;
using cutegen::testing::TempDir;
}  // namespace

TEST(RunDir, AFreshRunCreatesTheDirectoryWithItsMarkerAndLock) {
  TempDir t;
  auto run = RunDir::open(t.path / "a/b/run", RunDir::Mode::fresh, "test");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(fs::exists(t.path / "a/b/run" / kRunMarkerFile));
  EXPECT_EQ(*read_file(t.path / "a/b/run" / kRunLockFile), std::to_string(::getpid()) + "\n");
  EXPECT_EQ(inspect_run_dir(t.path / "a/b/run").kind, RunDirKind::cutegen_run);
}

TEST(RunDir, AnEmptyDirectoryIsTakenForAFreshRun) {
  TempDir t;
  fs::create_directory(t.path / "run");
  auto run = RunDir::open(t.path / "run", RunDir::Mode::fresh, "test");
  ASSERT_TRUE(run.ok()) << run.error().message;
}

TEST(RunDir, ANonEmptyDirectoryThatIsNoRunIsRefusedAndLeftAlone) {
  TempDir t;
  ASSERT_TRUE(write_file_atomic(t.path / "mine/report.md", "the user's own report").ok());
  ASSERT_TRUE(write_file_atomic(t.path / "mine/best/kernel.cu", "the user's kernel").ok());
  for (auto mode : {RunDir::Mode::fresh, RunDir::Mode::resume}) {
    auto run = RunDir::open(t.path / "mine", mode, "test");
    ASSERT_FALSE(run.ok());
    const std::string& m = run.error().message;
    EXPECT_TRUE(contains(m, "is not a cutegen run directory")) << m;
    EXPECT_TRUE(contains(m, "best, report.md")) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_EQ(*read_file(t.path / "mine/report.md"), "the user's own report");
  EXPECT_FALSE(fs::exists(t.path / "mine" / kRunLockFile));
  EXPECT_FALSE(fs::exists(t.path / "mine" / kRunMarkerFile));
}

TEST(RunDir, AFileIsRefused) {
  TempDir t;
  ASSERT_TRUE(write_file_atomic(t.path / "notes.txt", "x").ok());
  auto run = RunDir::open(t.path / "notes.txt", RunDir::Mode::fresh, "test");
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(contains(run.error().message, "is not a directory")) << run.error().message;
}

TEST(RunDir, AnExistingRunIsRefusedWithoutResumeAndSaysHowToResume) {
  TempDir t;
  { ASSERT_TRUE(RunDir::open(t.path / "run", RunDir::Mode::fresh, "test").ok()); }
  auto again = RunDir::open(t.path / "run", RunDir::Mode::fresh, "test");
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(contains(again.error().message, "already holds a cutegen run: add --resume")) << again.error().message;
  auto resumed = RunDir::open(t.path / "run", RunDir::Mode::resume, "test");
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_TRUE(resumed->resumed());
}

TEST(RunDir, ResumeNeedsARun) {
  TempDir t;
  auto missing = RunDir::open(t.path / "none", RunDir::Mode::resume, "test");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error().message, "nothing to resume")) << missing.error().message;
  EXPECT_FALSE(fs::exists(t.path / "none"));
  fs::create_directory(t.path / "empty");
  auto empty = RunDir::open(t.path / "empty", RunDir::Mode::resume, "test");
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(contains(empty.error().message, "is empty")) << empty.error().message;
}

TEST(RunDir, ARunFromBeforeTheMarkerIsResumableAndGetsOne) {
  TempDir t;
  ASSERT_TRUE(write_file_atomic(t.path / "old/events.jsonl", "{\"type\":\"problem\",\"key\":\"k\"}\n").ok());
  ASSERT_TRUE(write_file_atomic(t.path / "old/config.json", "{}").ok());
  EXPECT_FALSE(RunDir::open(t.path / "old", RunDir::Mode::fresh, "test").ok());
  auto run = RunDir::open(t.path / "old", RunDir::Mode::resume, "test");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(fs::exists(t.path / "old" / kRunMarkerFile));
}

TEST(RunDir, ASecondRunOnALockedDirectoryFailsAtOnceNamingTheHolder) {
  TempDir t;
  { ASSERT_TRUE(RunDir::open(t.path / "run", RunDir::Mode::fresh, "test").ok()); }
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the first run: holds the directory until told to stop
    auto run = RunDir::open(t.path / "run", RunDir::Mode::resume, "test");
    char c = run.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    (void)!::read(release[0], &c, 1);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto second = RunDir::open(t.path / "run", RunDir::Mode::resume, "test");
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(contains(second.error().message, fmt::format("in use by another cutegen run (pid {})", child)))
      << second.error().message;
  ASSERT_EQ(::write(release[1], "x", 1), 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  // The holder is gone, so is its lock: no stale lock file can keep the directory closed.
  auto third = RunDir::open(t.path / "run", RunDir::Mode::resume, "test");
  EXPECT_TRUE(third.ok()) << third.error().message;
}

TEST(RunDir, UniqueDefaultNamesNeverCollide) {
  TempDir t;
  std::set<fs::path> seen;
  std::vector<RunDir> runs;
  for (int i = 0; i < 40; ++i) {
    auto run = RunDir::create_unique(t.path / "cutegen-runs", "relu", "test");
    ASSERT_TRUE(run.ok()) << run.error().message;
    EXPECT_TRUE(seen.insert(run->path()).second) << run->path();
    EXPECT_TRUE(run->path().filename().string().starts_with("relu-"));
    runs.push_back(std::move(*run));
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(t.path / "cutegen-runs"), fs::directory_iterator()), 40);
}

TEST(RunDir, AbandoningAFreshRunRemovesWhatItWroteOnly) {
  TempDir t;
  {
    auto run = RunDir::open(t.path / "made", RunDir::Mode::fresh, "test");
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE(write_file_atomic(run->path() / "work/worker.log", "x").ok());
    EXPECT_TRUE(run->abandon().ok());
  }
  EXPECT_FALSE(fs::exists(t.path / "made"));  // this run made it, so it goes
  fs::create_directory(t.path / "given");
  {
    auto run = RunDir::open(t.path / "given", RunDir::Mode::fresh, "test");
    ASSERT_TRUE(run.ok());
    EXPECT_TRUE(run->abandon().ok());
  }
  EXPECT_EQ(inspect_run_dir(t.path / "given").kind, RunDirKind::empty);  // the user's, so it stays
  {
    auto run = RunDir::open(t.path / "given", RunDir::Mode::fresh, "test");
    ASSERT_TRUE(run.ok());
  }
  {
    auto resumed = RunDir::open(t.path / "given", RunDir::Mode::resume, "test");
    ASSERT_TRUE(resumed.ok());
    EXPECT_TRUE(resumed->abandon().ok());
  }
  EXPECT_TRUE(fs::exists(t.path / "given" / kRunMarkerFile));  // a resumed run keeps everything
}
