#pragma once
// Content-addressed store of compile results: <root>/compile/v1/<key[0:2]>/<key>/{kernel.so,outcome.json}.
// Entries are built in a private staging directory and renamed into place, so readers never see a
// half-written entry; a per-key flock serialises concurrent compiles of the same key, so the second
// waits and then hits instead of compiling again.
//
// What a hit is worth: an entry's outcome.json records its library's SHA-256 when the entry is
// committed, and a hit is served only when kernel.so still matches it (a disk that filled up, a
// copy cut short, a hand edit); otherwise the entry is removed, the user told once, and the kernel
// compiled again. An entry made before hashes were recorded counts as damaged the same way.
//
// Bounded size: a cap (config cache.max_mb) with least-recently-used eviction. A hit touches the
// entry directory's mtime, which is its "last used" time; eviction removes the oldest first and
// never an entry whose key lock is held (a compile of it is running) nor the entry just committed.
// Staging directories are flock'ed by the compile building in them; when the cache is opened, those
// older than an hour whose lock is free (their compile crashed) are reaped.
// Removing an entry renames it into staging/ first, so no reader ever sees it half deleted.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cutegen {

class CacheLock {
 public:
  explicit CacheLock(int fd) : fd_(fd) {}
  CacheLock(CacheLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;
  ~CacheLock();

 private:
  int fd_;
};

inline constexpr std::uintmax_t kDefaultCacheMaxMb = 5000;

struct CacheOptions {
  std::uintmax_t max_bytes = kDefaultCacheMaxMb << 20;  // cache.max_mb
  std::chrono::seconds stale_staging{3600};             // a staging directory this old and unlocked is a crash's
  // Where a damaged entry or a failed eviction is told (one line each); default: stderr.
  std::function<void(const std::string&)> warn;
};

// The config's "cache" object: {"max_mb": N}. Unknown keys are errors.
Result<CacheOptions> apply_cache_config(CacheOptions options, const nlohmann::json& section);

struct CacheEntryInfo {
  std::string key;
  std::string verdict;  // from outcome.json; "incomplete" when it has none
  std::uintmax_t bytes = 0;
  std::filesystem::file_time_type last_used;
};

struct CacheContents {
  std::vector<CacheEntryInfo> entries;  // most recently used first
  std::uintmax_t total_bytes = 0;       // of the entries
  size_t staging_dirs = 0;              // builds in progress, or left by crashes
  std::uintmax_t staging_bytes = 0;
};

struct PruneResult {
  size_t evicted = 0;
  std::uintmax_t freed_bytes = 0;
  size_t staging_reaped = 0;
  size_t skipped_in_use = 0;  // entries or staging directories whose lock was held
};

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path root, CacheOptions options = {});
  // The cache as compiles use it: stale staging directories reaped and the cap enforced first.
  static Result<CompileCache> open(std::filesystem::path root, CacheOptions options = {});

  const std::filesystem::path& dir() const { return dir_; }  // <root>/compile/v1
  const CacheOptions& options() const { return options_; }
  std::filesystem::path entry_dir(const std::string& key) const;
  // The stored outcome.json of a complete, intact entry, if any (touching it as used). A damaged one
  // is removed and reported, and is a miss.
  std::optional<nlohmann::json> lookup(const std::string& key) const;
  Result<CacheLock> lock(const std::string& key) const;
  // A fresh staging directory, locked against reaping until commit() moves it or it is removed.
  Result<std::filesystem::path> make_staging_dir() const;
  // Records the library's hash and moves a finished staging directory into place (call holding the
  // key's lock). If an intact entry got there first, it wins and ours is discarded: both hold the same
  // content by construction. Then evicts down to the cap.
  Status commit(const std::filesystem::path& staging, const std::string& key) const;

  Result<CacheContents> contents() const;
  // Reaps stale staging directories, then evicts least recently used entries until the entries fit
  // in `max_bytes` (default: the options' cap). `keep` is never evicted.
  Result<PruneResult> prune(std::optional<std::uintmax_t> max_bytes = std::nullopt, const std::string& keep = "") const;
  // Removes every entry and staging directory not in use.
  Result<PruneResult> clear() const;

 private:
  struct StagingLocks;
  void warn(const std::string& line) const;
  Status discard_entry(const std::string& key) const;
  std::string damage(const std::filesystem::path& entry, const nlohmann::json& outcome) const;
  Result<PruneResult> remove_unused(std::uintmax_t max_bytes, std::chrono::seconds staging_age,
                                    const std::string& keep) const;

  std::filesystem::path dir_;
  CacheOptions options_;
  std::shared_ptr<StagingLocks> staging_locks_;  // shared: NvccCompiler holds a copy
};

}  // namespace cutegen
