#include "compile/compile_cache.h"

#include <gtest/gtest.h>

#include <set>

#include "common/fs.h"
#include "common/locations.h"
#include "common/process.h"
#include "common/sha256.h"
#include "common/slow_compile_tests.h"
#include "compile/nvcc_compiler.h"

using namespace cutegen;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct CacheFixture {
  fs::path root;
  std::vector<std::string> warnings;
  CacheFixture() { root = *make_unique_dir(fs::temp_directory_path(), "cutegen-cache-test-"); }
  ~CacheFixture() { fs::remove_all(root); }
  CacheOptions options(std::uintmax_t max_bytes = kDefaultCacheMaxMb << 20) {
    CacheOptions o;
    o.max_bytes = max_bytes;
    o.warn = [this](const std::string& line) { warnings.push_back(line); };
    return o;
  }
  CompileCache cache(std::uintmax_t max_bytes = kDefaultCacheMaxMb << 20) { return CompileCache(root, options(max_bytes)); }
  // What NvccCompiler leaves in staging before committing: outcome.json, and kernel.so when it built.
  void put(const CompileCache& c, const std::string& key, size_t library_bytes, const std::string& verdict = "ok") {
    auto staging = c.make_staging_dir();
    ASSERT_TRUE(staging.ok()) << staging.error().message;
    if (verdict == "ok") {
      ASSERT_TRUE(write_file_atomic(*staging / "kernel.so", std::string(library_bytes, 'L')).ok());
    }
    ASSERT_TRUE(write_file_atomic(*staging / "outcome.json", nlohmann::json{{"verdict", verdict}}.dump()).ok());
    auto lock = c.lock(key);
    ASSERT_TRUE(lock.ok());
    auto committed = c.commit(*staging, key);
    ASSERT_TRUE(committed.ok()) << committed.error().message;
  }
  static std::string key(int i) { return sha256_hex(std::to_string(i)); }
  static void age(const fs::path& p, std::chrono::seconds by) {
    fs::last_write_time(p, fs::file_time_type::clock::now() - by);
  }
};

std::set<std::string> keys_in(const CompileCache& c) {
  std::set<std::string> out;
  auto listed = c.contents();  // kept alive: a range-for over a temporary's member would dangle
  EXPECT_TRUE(listed.ok());
  for (const auto& e : listed->entries) out.insert(e.key);
  return out;
}

}  // namespace

TEST(CompileCache, ACommittedLibraryIsHashedAndServedWhileIntact) {
  CacheFixture f;
  auto c = f.cache();
  f.put(c, CacheFixture::key(1), 1000);
  auto hit = c.lookup(CacheFixture::key(1));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ((*hit)["library_sha256"], sha256_hex(std::string(1000, 'L')));
  EXPECT_TRUE(f.warnings.empty());
  // Failed compiles have no library and nothing to hash; they hit all the same.
  f.put(c, CacheFixture::key(2), 0, "compile_error");
  EXPECT_TRUE(c.lookup(CacheFixture::key(2)).has_value());
}

TEST(CompileCache, ATruncatedLibraryIsAMissThatRemovesTheEntryAndSaysSoOnce) {
  CacheFixture f;
  auto c = f.cache();
  const std::string k = CacheFixture::key(1);
  f.put(c, k, 4096);
  fs::resize_file(c.entry_dir(k) / "kernel.so", 1000);  // a disk that filled up mid-copy
  EXPECT_FALSE(c.lookup(k).has_value());
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("does not match its recorded SHA-256"), std::string::npos) << f.warnings[0];
  EXPECT_NE(f.warnings[0].find("compiling again"), std::string::npos) << f.warnings[0];
  EXPECT_FALSE(fs::exists(c.entry_dir(k)));
  EXPECT_FALSE(c.lookup(k).has_value());
  EXPECT_EQ(f.warnings.size(), 1u);
  f.put(c, k, 4096);  // the recompile takes its place
  EXPECT_TRUE(c.lookup(k).has_value());
}

TEST(CompileCache, AnEntryWithoutARecordedHashIsNotTrusted) {
  CacheFixture f;
  auto c = f.cache();
  const std::string k = CacheFixture::key(1);
  ASSERT_TRUE(write_file_atomic(c.entry_dir(k) / "kernel.so", "ELF").ok());
  ASSERT_TRUE(write_file_atomic(c.entry_dir(k) / "outcome.json", R"({"verdict": "ok"})").ok());
  EXPECT_FALSE(c.lookup(k).has_value());
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("older cutegen"), std::string::npos);
}

TEST(CompileCache, ACommitReplacesADamagedEntryInsteadOfDeferringToIt) {
  CacheFixture f;
  auto c = f.cache();
  const std::string k = CacheFixture::key(1);
  f.put(c, k, 100);
  ASSERT_TRUE(write_file_atomic(c.entry_dir(k) / "kernel.so", "changed").ok());
  f.put(c, k, 100);
  auto hit = c.lookup(k);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*read_file(c.entry_dir(k) / "kernel.so"), std::string(100, 'L'));
}

TEST(CompileCache, OpeningReapsStaleStagingButNotALockedOrARecentOne) {
  CacheFixture f;
  auto building = f.cache();
  auto locked = building.make_staging_dir();  // a compile in progress (this object holds its lock)
  ASSERT_TRUE(locked.ok());
  auto crashed = make_unique_dir(building.dir() / "staging", "build-");
  auto recent = make_unique_dir(building.dir() / "staging", "build-");
  ASSERT_TRUE(crashed.ok() && recent.ok());
  ASSERT_TRUE(write_file_atomic(*crashed / "candidate.cu", "x").ok());
  CacheFixture::age(*locked, 2h);
  CacheFixture::age(*crashed, 2h);
  auto opened = CompileCache::open(f.root, f.options());
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_TRUE(fs::exists(*locked));
  EXPECT_FALSE(fs::exists(*crashed));
  EXPECT_TRUE(fs::exists(*recent));
  auto pruned = opened->prune();
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->skipped_in_use, 1u);  // the locked one, seen again
}

TEST(CompileCache, EvictionKeepsTheMostRecentlyUsedUnderTheCap) {
  CacheFixture f;
  auto c = f.cache();
  for (int i = 0; i < 5; ++i) {
    f.put(c, CacheFixture::key(i), 1 << 20);
    CacheFixture::age(c.entry_dir(CacheFixture::key(i)), std::chrono::hours(10 - i));  // 0 oldest ... 4 newest
  }
  ASSERT_TRUE(c.lookup(CacheFixture::key(0)).has_value());  // used just now: no longer the oldest
  auto pruned = c.prune(std::uintmax_t{3} << 20 | 4096);   // room for three entries and their outcome files
  ASSERT_TRUE(pruned.ok()) << pruned.error().message;
  EXPECT_EQ(pruned->evicted, 2u);
  EXPECT_EQ(keys_in(c), (std::set<std::string>{CacheFixture::key(0), CacheFixture::key(3), CacheFixture::key(4)}));
  EXPECT_LE(c.contents()->total_bytes, (std::uintmax_t{3} << 20) | 4096);
}

TEST(CompileCache, EvictionNeverRemovesAnEntryWhoseCompileHoldsItsLock) {
  CacheFixture f;
  auto c = f.cache();
  for (int i = 0; i < 3; ++i) {
    f.put(c, CacheFixture::key(i), 1 << 20);
    CacheFixture::age(c.entry_dir(CacheFixture::key(i)), std::chrono::hours(10 - i));
  }
  auto held = c.lock(CacheFixture::key(0));  // the oldest, being compiled again by someone
  ASSERT_TRUE(held.ok());
  auto pruned = c.prune(std::uintmax_t{2} << 20 | 4096);
  ASSERT_TRUE(pruned.ok()) << pruned.error().message;
  EXPECT_EQ(pruned->skipped_in_use, 1u);
  EXPECT_EQ(keys_in(c), (std::set<std::string>{CacheFixture::key(0), CacheFixture::key(2)}));
}

TEST(CompileCache, ACommitOverTheCapEvictsOthersButNeverTheNewEntry) {
  CacheFixture f;
  auto c = f.cache(std::uintmax_t{1} << 20);
  f.put(c, CacheFixture::key(1), 600 << 10);
  CacheFixture::age(c.entry_dir(CacheFixture::key(1)), 1h);
  f.put(c, CacheFixture::key(2), 600 << 10);
  EXPECT_EQ(keys_in(c), std::set<std::string>{CacheFixture::key(2)});
  f.put(c, CacheFixture::key(3), 2 << 20);  // bigger than the whole cap on its own: kept all the same
  EXPECT_EQ(keys_in(c), std::set<std::string>{CacheFixture::key(3)});
  EXPECT_TRUE(f.warnings.empty());
}

TEST(CompileCache, ClearRemovesEverythingNotInUse) {
  CacheFixture f;
  auto c = f.cache();
  for (int i = 0; i < 3; ++i) f.put(c, CacheFixture::key(i), 1000);
  auto held = c.lock(CacheFixture::key(1));
  auto building = c.make_staging_dir();
  ASSERT_TRUE(held.ok() && building.ok());
  auto cleared = c.clear();
  ASSERT_TRUE(cleared.ok()) << cleared.error().message;
  EXPECT_EQ(cleared->evicted, 2u);
  EXPECT_EQ(cleared->skipped_in_use, 2u);  // the locked entry and the staging directory in use
  EXPECT_EQ(keys_in(c), std::set<std::string>{CacheFixture::key(1)});
  EXPECT_TRUE(fs::exists(*building));
  // Lock files of evicted keys go too (the held one stays).
  EXPECT_FALSE(fs::exists(c.dir() / "locks" / (CacheFixture::key(0) + ".lock")));
  EXPECT_TRUE(fs::exists(c.dir() / "locks" / (CacheFixture::key(1) + ".lock")));
}

TEST(CompileCache, ContentsListsEntriesMostRecentlyUsedFirst) {
  CacheFixture f;
  auto c = f.cache();
  f.put(c, CacheFixture::key(1), 2000);
  f.put(c, CacheFixture::key(2), 0, "rejected");
  CacheFixture::age(c.entry_dir(CacheFixture::key(2)), 1h);
  auto listed = c.contents();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->entries.size(), 2u);
  EXPECT_EQ(listed->entries[0].key, CacheFixture::key(1));
  EXPECT_EQ(listed->entries[0].verdict, "ok");
  EXPECT_GE(listed->entries[0].bytes, 2000u);
  EXPECT_EQ(listed->entries[1].verdict, "rejected");
  EXPECT_EQ(listed->total_bytes, listed->entries[0].bytes + listed->entries[1].bytes);
}

TEST(CompileCache, ConfigTakesMaxMbAndRefusesAnythingElse) {
  auto ok = apply_cache_config({}, {{"max_mb", 200}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->max_bytes, std::uintmax_t{200} << 20);
  auto unknown = apply_cache_config({}, {{"max_gb", 2}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown key cache.max_gb (known: max_mb)"), std::string::npos);
  EXPECT_FALSE(apply_cache_config({}, {{"max_mb", 0}}).ok());
  EXPECT_FALSE(apply_cache_config({}, {{"max_mb", "5G"}}).ok());
  EXPECT_FALSE(apply_cache_config({}, nlohmann::json::array()).ok());
}

// The real thing: nvcc builds, the cached library is cut short, the next compile notices and builds again.
TEST(CompileCacheNvcc, ATruncatedCachedLibraryIsRecompiledNotServed) {
  CUTEGEN_SLOW_COMPILE_TEST(
      "two real builds; CompileCache.ATruncatedLibraryIsAMissThatRemovesTheEntryAndSaysSoOnce checks it without nvcc");
  CacheFixture f;
  PosixProcessRunner runner;
  CompileOptions options;
  auto tc = probe_toolchain(runner, options);
  ASSERT_TRUE(tc.ok()) << tc.error().message;
  auto source = read_file(fs::path(CUTEGEN_SOURCE_DIR) / "attacks/honest/relu_vec.cu");
  ASSERT_TRUE(source.ok());
  NvccCompiler compiler(runner, options, *tc, f.cache(), CUTEGEN_SANDBOX_BIN);
  auto first = compiler.compile({*source, "relu_vec.cu"});
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_EQ(first->verdict, CompileVerdict::ok) << first->feedback();
  const auto full_size = fs::file_size(first->library);
  fs::resize_file(first->library, full_size / 2);
  auto second = compiler.compile({*source, "relu_vec.cu"});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(second->cache_hit);
  EXPECT_EQ(second->verdict, CompileVerdict::ok);
  EXPECT_EQ(fs::file_size(second->library), full_size);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("does not match"), std::string::npos) << f.warnings[0];
  auto third = compiler.compile({*source, "relu_vec.cu"});
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->cache_hit);
}
