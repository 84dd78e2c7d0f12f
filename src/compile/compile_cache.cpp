#include "compile/compile_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen {
namespace fs = std::filesystem;

CacheLock::~CacheLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

CompileCache::CompileCache(fs::path root) : dir_(std::move(root) / "compile" / "v1") {}

fs::path CompileCache::entry_dir(const std::string& key) const { return dir_ / key.substr(0, 2) / key; }

std::optional<nlohmann::json> CompileCache::lookup(const std::string& key) const {
  auto text = read_file(entry_dir(key) / "outcome.json");
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;  // a corrupt entry is a miss; commit() replaces it
  return j;
}

Result<CacheLock> CompileCache::lock(const std::string& key) const {
  fs::path locks = dir_ / "locks";
  std::error_code ec;
  fs::create_directories(locks, ec);
  if (ec) return Error{fmt::format("cannot create cache directory {}: {} (set CUTEGEN_CACHE_DIR to a writable place)",
                                   locks.string(), ec.message())};
  fs::path file = locks / (key + ".lock");
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", file.string(), std::strerror(errno))};
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd);
    return Error{fmt::format("cannot lock {}: {}", file.string(), std::strerror(e))};
  }
  return CacheLock(fd);
}

Result<fs::path> CompileCache::make_staging_dir() const { return make_unique_dir(dir_ / "staging", "build-"); }

Status CompileCache::commit(const fs::path& staging, const std::string& key) const {
  fs::path target = entry_dir(key);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message())};
  if (fs::exists(target / "outcome.json")) {
    fs::remove_all(staging, ec);
    return ok_status();
  }
  fs::remove_all(target, ec);  // a corrupt or partial entry from an older crash
  if (::rename(staging.c_str(), target.c_str()) != 0) {
    int e = errno;
    if ((e == ENOTEMPTY || e == EEXIST) && fs::exists(target / "outcome.json")) {
      fs::remove_all(staging, ec);
      return ok_status();
    }
    return Error{fmt::format("cannot move {} to {}: {}", staging.string(), target.string(), std::strerror(e))};
  }
  return ok_status();
}

}  // namespace cutegen
