#pragma once
// Content-addressed store of compile results: <root>/compile/v1/<key[0:2]>/<key>/{kernel.so,outcome.json}.
// Entries are built in a private staging directory and renamed into place, so readers never see a
// half-written entry; a per-key flock serialises concurrent compiles of the same key, so the second
// waits and then hits instead of compiling again.
#include <filesystem>
#include <optional>
#include <string>

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

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path root);

  std::filesystem::path entry_dir(const std::string& key) const;
  // The stored outcome.json of a complete entry, if any.
  std::optional<nlohmann::json> lookup(const std::string& key) const;
  Result<CacheLock> lock(const std::string& key) const;
  Result<std::filesystem::path> make_staging_dir() const;
  // Moves a finished staging directory into place. If another process got there first, its entry
  // wins and ours is discarded: both hold the same content by construction.
  Status commit(const std::filesystem::path& staging, const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace cutegen
