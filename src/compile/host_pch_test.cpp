#include "compile/host_pch.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/fs.h"
#include "compile/nvcc_plan.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

// cudafe++'s host source in miniature: the file's opening marker, the headers' expansion, then the
// candidate's code from its second marker on.
std::string host_source(std::size_t header_bytes, const std::string& own = "int own;\n") {
  return "# 1 \"candidate.cu\"\n#pragma GCC diagnostic push\n# 1 \"/cutlass/include/cute/tensor.hpp\" 1\n" +
         std::string(header_bytes, ' ') + "\n# 12 \"candidate.cu\" 2\n" + own + "# 20 \"candidate.cu\"\nint more;\n";
}

fs::path fresh_dir() {
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-host-pch-");
  EXPECT_TRUE(dir.ok());
  return dir.ok() ? *dir : fs::path();
}

}  // namespace

TEST(HostPch, TheSourceSplitsWhereTheCandidatesOwnCodeStarts) {
  const std::string text = host_source(100);
  auto split = split_host_source(text, "candidate.cu", 16);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(std::string(split->rest), "# 12 \"candidate.cu\" 2\nint own;\n# 20 \"candidate.cu\"\nint more;\n");
  EXPECT_EQ(std::string(split->prefix) + std::string(split->rest), text);
  EXPECT_EQ(host_source_with_prefix_header(split->rest, "/cache/host-pch/v1/k/cutegen-host-prefix.h"),
            "#include \"/cache/host-pch/v1/k/cutegen-host-prefix.h\"\n" + std::string(split->rest));
}

TEST(HostPch, NoSplitWithoutAMarkerOrWithASmallPrefix) {
  EXPECT_FALSE(split_host_source(host_source(100), "candidate.cu", 1 << 20).has_value()) << "prefix below the minimum";
  EXPECT_FALSE(split_host_source("# 1 \"candidate.cu\"\nint x;\n", "candidate.cu", 0).has_value()) << "one marker";
  // Markers of other files, or text that only looks like one, do not split.
  const std::string other = "# 1 \"candidate.cu\"\n# 3 \"candidate.cuh\"\n#  4 \"candidate.cu\"\n// # 5 \"candidate.cu\"\n";
  EXPECT_FALSE(split_host_source(other, "candidate.cu", 0).has_value());
  EXPECT_TRUE(split_host_source(host_source(2 << 20), "candidate.cu").has_value());
}

TEST(HostPch, TheKeyCoversThePrefixTheScriptAndTheCompiler) {
  const auto k = HostPchStore::key_for("prefix", "script", "g++ 12");
  EXPECT_EQ(k.size(), 64u);
  EXPECT_NE(k, HostPchStore::key_for("prefix ", "script", "g++ 12"));
  EXPECT_NE(k, HostPchStore::key_for("prefix", "script -O2", "g++ 12"));
  EXPECT_NE(k, HostPchStore::key_for("prefix", "script", "g++ 13"));
  // Parts are length-delimited: moving text from one to the next is another key.
  EXPECT_NE(HostPchStore::key_for("ab", "c", "x"), HostPchStore::key_for("a", "bc", "x"));
}

TEST(HostPch, TheStoreFindsOnlyCommittedEntries) {
  const fs::path dir = fresh_dir();
  HostPchStore store(dir / "host-pch");
  const std::string key = HostPchStore::key_for("p", "s", "c");
  EXPECT_FALSE(store.find(key).has_value());
  auto built = store.start("the prefix");
  ASSERT_TRUE(built.ok()) << built.error().message;
  EXPECT_FALSE(store.find(key).has_value()) << "a build in progress is not an entry";
  ASSERT_TRUE(write_file_atomic(*built / (std::string(kHostPrefixHeader) + ".gch"), "gch bytes").ok());
  ASSERT_TRUE(store.commit(*built, key).ok());
  auto entry = store.find(key);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(*read_file(*entry / kHostPrefixHeader), "the prefix");

  // Another build of the same key loses to the entry there, and leaves nothing behind.
  auto twin = store.start("the prefix");
  ASSERT_TRUE(twin.ok());
  ASSERT_TRUE(store.commit(*twin, key).ok());
  EXPECT_FALSE(fs::exists(*twin));
  EXPECT_TRUE(store.find(key).has_value());

  auto usage = store.usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->entries, 1u);
  EXPECT_EQ(usage->bytes, std::string("the prefix").size() + std::string("gch bytes").size());
  auto cleared = store.clear();
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(*cleared, 1u);
  EXPECT_FALSE(store.find(key).has_value());
  EXPECT_EQ(store.usage()->entries, 0u);
  fs::remove_all(dir);
}

TEST(HostPch, TheStoreKeepsTheMostRecentlyUsedEntries) {
  const fs::path dir = fresh_dir();
  HostPchStore store(dir, 2);
  auto add = [&](const std::string& name) {
    const std::string key = HostPchStore::key_for(name, "s", "c");
    auto built = store.start(name);
    EXPECT_TRUE(built.ok());
    EXPECT_TRUE(write_file_atomic(*built / (std::string(kHostPrefixHeader) + ".gch"), name).ok());
    EXPECT_TRUE(store.commit(*built, key).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct modification times
    return key;
  };
  const auto a = add("a"), b = add("b");
  ASSERT_TRUE(store.find(a).has_value());  // a used after b: b is the oldest now
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto c = add("c");
  EXPECT_TRUE(store.find(a).has_value());
  EXPECT_FALSE(store.find(b).has_value());
  EXPECT_TRUE(store.find(c).has_value());
  std::size_t left = 0;
  for (const auto& e : fs::directory_iterator(dir)) left += e.path().filename().string().rfind("tmp-", 0) == 0;
  EXPECT_EQ(left, 0u) << "an evicted entry's directory was left behind";
  fs::remove_all(dir);
}

TEST(HostPch, AKilledBuildsDirectoryIsReapedAndADamagedEntryReplaced) {
  const fs::path dir = fresh_dir();
  HostPchStore store(dir);
  const fs::path killed = dir / "tmp-killed", recent = dir / "tmp-running";
  fs::create_directories(killed);
  fs::create_directories(recent);
  fs::last_write_time(killed, fs::file_time_type::clock::now() - std::chrono::hours(2));
  auto built = store.start("the prefix");
  ASSERT_TRUE(built.ok());
  EXPECT_FALSE(fs::exists(killed)) << "a build dead for two hours left its directory";
  EXPECT_TRUE(fs::exists(recent)) << "a build still running lost its directory";

  // An entry without its .gch is never found, so a build of its key takes its place.
  const std::string key = HostPchStore::key_for("the prefix", "s", "c");
  fs::create_directories(dir / key);
  ASSERT_TRUE(write_file_atomic(dir / key / kHostPrefixHeader, "the prefix").ok());
  EXPECT_FALSE(store.find(key).has_value());
  ASSERT_TRUE(write_file_atomic(*built / (std::string(kHostPrefixHeader) + ".gch"), "gch").ok());
  ASSERT_TRUE(store.commit(*built, key).ok());
  EXPECT_TRUE(store.find(key).has_value());
  fs::remove_all(dir);
}
