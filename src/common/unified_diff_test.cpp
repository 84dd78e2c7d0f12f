#include "common/unified_diff.h"

#include <gtest/gtest.h>

#include <string>

using namespace cutegen;

namespace {
std::string numbered(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}
}  // namespace

TEST(EditDiff, EqualInputsGiveNoDiff) {
  auto d = unified_diff("a\nb\n", "a\nb\n");
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.lines_added, 0);
}

TEST(EditDiff, OneChangedLineWithContext) {
  auto d = unified_diff(numbered(1, 10), numbered(1, 4) + "LINE 5\n" + numbered(6, 10));
  EXPECT_EQ(d.text,
            "--- a/kernel.cu\n"
            "+++ b/kernel.cu\n"
            "@@ -2,7 +2,7 @@\n"
            " line 2\n line 3\n line 4\n"
            "-line 5\n"
            "+LINE 5\n"
            " line 6\n line 7\n line 8\n");
  EXPECT_EQ(d.lines_added, 1);
  EXPECT_EQ(d.lines_removed, 1);
}

TEST(EditDiff, DistantChangesMakeSeparateHunksNearOnesMerge) {
  std::string before = numbered(1, 30);
  std::string after = "line 0\n" + numbered(1, 19) + numbered(21, 30) + "line 31\n";
  DiffOptions opts;
  opts.before_label = "a/k.cu";
  opts.after_label = "b/k.cu";
  opts.context = 2;
  auto d = unified_diff(before, after, opts);
  EXPECT_EQ(d.text,
            "--- a/k.cu\n+++ b/k.cu\n"
            "@@ -1,2 +1,3 @@\n+line 0\n line 1\n line 2\n"
            "@@ -18,5 +19,4 @@\n line 18\n line 19\n-line 20\n line 21\n line 22\n"
            "@@ -29,2 +29,3 @@\n line 29\n line 30\n+line 31\n");
  EXPECT_EQ(d.lines_added, 2);
  EXPECT_EQ(d.lines_removed, 1);

  // Changes whose contexts touch share one hunk.
  opts.context = 10;
  auto merged = unified_diff(before, after, opts);
  int hunks = 0;
  for (std::size_t at = merged.text.find("\n@@ "); at != std::string::npos; at = merged.text.find("\n@@ ", at + 1))
    ++hunks;
  EXPECT_EQ(hunks, 1) << merged.text;
}

TEST(EditDiff, InsertIntoAndDeleteEverything) {
  auto from_empty = unified_diff("", "a\nb\n");
  EXPECT_EQ(from_empty.text, "--- a/kernel.cu\n+++ b/kernel.cu\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  auto to_empty = unified_diff("a\n", "");
  EXPECT_EQ(to_empty.text, "--- a/kernel.cu\n+++ b/kernel.cu\n@@ -1 +0,0 @@\n-a\n");
}

TEST(EditDiff, MissingFinalNewlineIsMarked) {
  auto d = unified_diff("a\nb\n", "a\nb");
  EXPECT_EQ(d.text,
            "--- a/kernel.cu\n+++ b/kernel.cu\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
}

TEST(EditDiff, MinimalScriptForMovedBlock) {
  // Myers finds the shortest script: moving one line costs one removal and one insertion.
  auto d = unified_diff("a\nb\nc\nd\n", "b\nc\nd\na\n");
  EXPECT_EQ(d.lines_added, 1);
  EXPECT_EQ(d.lines_removed, 1);
  EXPECT_EQ(d.text, "--- a/kernel.cu\n+++ b/kernel.cu\n@@ -1,4 +1,4 @@\n-a\n b\n c\n d\n+a\n");
}

TEST(EditDiff, RandomEditsRoundTrip) {
  // Applying the diff's +/space lines must rebuild `after`, and -/space lines `before`, for many
  // pseudo-random pairs (a cheap property test of the edit script and hunk bookkeeping).
  unsigned seed = 12345;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
  for (int trial = 0; trial < 200; ++trial) {
    std::string before, after;
    int n = static_cast<int>(next() % 30);
    for (int i = 0; i < n; ++i) {
      std::string line = "l" + std::to_string(next() % 6) + "\n";
      before += line;
      unsigned r = next() % 10;
      if (r == 0) continue;                                          // delete
      if (r == 1) after += "new" + std::to_string(next() % 3) + "\n";  // replace
      else after += line;
      if (r == 2) after += "ins\n";                                  // insert
    }
    DiffOptions opts;
    opts.context = 1000;  // one hunk covering everything
    auto d = unified_diff(before, after, opts);
    if (before == after) {
      EXPECT_TRUE(d.empty());
      continue;
    }
    std::string rebuilt_before, rebuilt_after;
    std::size_t pos = d.text.find("@@", 0);
    pos = d.text.find('\n', pos) + 1;
    while (pos < d.text.size()) {
      std::size_t end = d.text.find('\n', pos) + 1;
      std::string line = d.text.substr(pos, end - pos);
      if (line[0] != '+') rebuilt_before += line.substr(1);
      if (line[0] != '-') rebuilt_after += line.substr(1);
      pos = end;
    }
    EXPECT_EQ(rebuilt_before, before) << d.text;
    EXPECT_EQ(rebuilt_after, after) << d.text;
  }
}
