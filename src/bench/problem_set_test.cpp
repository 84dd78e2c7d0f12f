#include "bench/problem_set.h"

#include <gtest/gtest.h>

#include <set>

#include "common/fs.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
using namespace cutegen::bench;
namespace fs = std::filesystem;

namespace {
using cutegen::testing::TempDir;
const char* kProblem = "class Model(nn.Module):\n    pass\ndef get_inputs():\n    return []\n";
void problem(const fs::path& p) { ASSERT_TRUE(write_file_atomic(p, kProblem).ok()); }
std::vector<std::string> names(const std::vector<ProblemTask>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) out.push_back(t.name);
  return out;
}
}  // namespace

TEST(ProblemSet, ADirectoryGivesItsProblemFilesSortedWithKernelBenchNumbers) {
  TempDir t;
  problem(t.path / "lvl/2_B.py");
  problem(t.path / "lvl/10_A.py");
  problem(t.path / "lvl/relu.py");
  ASSERT_TRUE(write_file_atomic(t.path / "lvl/helper.py", "def helper(): pass\n").ok());  // no Model: not a problem
  ASSERT_TRUE(write_file_atomic(t.path / "lvl/notes.txt", kProblem).ok());
  auto tasks = discover_problems({(t.path / "lvl").string()});
  ASSERT_TRUE(tasks.ok()) << tasks.error().message;
  EXPECT_EQ(names(*tasks), (std::vector<std::string>{"10_A", "2_B", "relu"}));
  EXPECT_EQ((*tasks)[0].number, 10);
  EXPECT_EQ((*tasks)[1].number, 2);
  EXPECT_FALSE((*tasks)[2].number);
  EXPECT_TRUE((*tasks)[0].path.is_absolute());
}

TEST(ProblemSet, GlobsFilesAndDuplicatesCollapse) {
  TempDir t;
  problem(t.path / "a/19_ReLU.py");
  problem(t.path / "a/20_LeakyReLU.py");
  auto tasks = discover_problems({(t.path / "a/19*.py").string(), (t.path / "a").string()});
  ASSERT_TRUE(tasks.ok()) << tasks.error().message;
  EXPECT_EQ(names(*tasks), (std::vector<std::string>{"19_ReLU", "20_LeakyReLU"}));
}

TEST(ProblemSet, CollidingStemsArePrefixedWithTheirDirectory) {
  TempDir t;
  problem(t.path / "level1/1_Conv.py");
  problem(t.path / "level2/1_Conv.py");
  problem(t.path / "level2/2_Gemm.py");
  auto tasks = discover_problems({(t.path / "level1").string(), (t.path / "level2").string()});
  ASSERT_TRUE(tasks.ok()) << tasks.error().message;
  EXPECT_EQ(names(*tasks), (std::vector<std::string>{"2_Gemm", "level1-1_Conv", "level2-1_Conv"}));
}

TEST(ProblemSet, BadArgumentsAreOneLineErrors) {
  TempDir t;
  fs::create_directories(t.path / "empty");
  for (const auto& arg : {(t.path / "missing.py").string(), (t.path / "empty").string(), (t.path / "*.nothing").string()}) {
    auto r = discover_problems({arg});
    ASSERT_FALSE(r.ok()) << arg;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
    EXPECT_NE(r.error().message.find(arg), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(discover_problems({}).ok());
}

TEST(ProblemSet, TaskNumbersComeOnlyFromALeadingNumberAndUnderscore) {
  EXPECT_EQ(task_number("19_ReLU"), 19);
  EXPECT_EQ(task_number("100_HingeLoss"), 100);
  EXPECT_FALSE(task_number("relu"));
  EXPECT_FALSE(task_number("3d_conv"));
  EXPECT_EQ(task_number("7"), 7);
}

TEST(ProblemSet, FilterExcludeRangesAndLimit) {
  std::vector<ProblemTask> all;
  for (int n : {1, 18, 19, 25, 32, 33}) all.push_back({std::to_string(n) + "_Op", "/p", n});
  all.push_back({"softmax_rows", "/p", std::nullopt});
  auto inc = parse_terms("19-32,soft");
  ASSERT_TRUE(inc.ok());
  auto exc = parse_terms("25");
  ASSERT_TRUE(exc.ok());
  EXPECT_EQ(names(select_tasks(all, {*inc, *exc, std::nullopt})),
            (std::vector<std::string>{"19_Op", "32_Op", "softmax_rows"}));
  EXPECT_EQ(names(select_tasks(all, {*inc, {}, 2})), (std::vector<std::string>{"19_Op", "25_Op"}));
  auto upper = parse_terms("SOFTMAX");  // names match without case
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(select_tasks(all, {*upper, {}, std::nullopt}).size(), 1u);
  EXPECT_FALSE(parse_terms("32-19").ok());
  EXPECT_FALSE(parse_terms("19-").ok());
  EXPECT_FALSE(parse_terms(",").ok());
}

TEST(ProblemSet, ShardsAreDisjointCoverEverythingAndAreStable) {
  std::vector<ProblemTask> all;
  for (int i = 0; i < 11; ++i) all.push_back({"t" + std::to_string(100 + i), "/p", std::nullopt});
  std::multiset<std::string> seen;
  for (int i = 0; i < 3; ++i)
    for (const auto& t : shard_tasks(all, {i, 3})) seen.insert(t.name);
  EXPECT_EQ(seen.size(), all.size());
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), all.size());
  EXPECT_EQ(names(shard_tasks(all, {1, 3})), (std::vector<std::string>{"t101", "t104", "t107", "t110"}));
  auto s = parse_shard("2/4");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  for (const char* bad : {"4/4", "1", "a/2", "1/0", "-1/2"}) EXPECT_FALSE(parse_shard(bad).ok()) << bad;
}
