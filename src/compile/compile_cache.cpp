#include "compile/compile_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/json_text.h"
#include "common/sha256.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

constexpr const char* kOutcome = "outcome.json";
constexpr const char* kLibrary = "kernel.so";  // the name NvccCompiler builds
constexpr const char* kHashKey = "library_sha256";

std::string string_field(const nlohmann::json& j, const char* key, const std::string& otherwise) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return otherwise;
}

bool is_shard(const std::string& name) {
  return name.size() == 2 && std::all_of(name.begin(), name.end(), [](char c) { return std::isxdigit(c) != 0; });
}

// An flock taken without waiting: the descriptor, or nullopt when another holder has it (or the
// path vanished meanwhile: someone else is removing it).
Result<std::optional<int>> try_lock(const fs::path& path, int open_flags) {
  int fd = ::open(path.c_str(), open_flags | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<int>{};
    return Error{fmt::format("cannot open {}: {}", path.string(), std::strerror(errno))};
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) return std::optional<int>{};
    return Error{fmt::format("cannot lock {}: {}", path.string(), std::strerror(e))};
  }
  return std::optional<int>{fd};
}

std::uintmax_t tree_bytes(const fs::path& p) {
  std::uintmax_t n = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(p, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code fe;
    if (it->is_regular_file(fe)) {
      auto size = it->file_size(fe);
      if (!fe) n += size;
    }
  }
  return n;
}

// Marks an entry as just used. A failure only makes the entry look older to eviction than it is,
// which costs at most a recompile; not worth failing a compile over.
void touch(const fs::path& p) { ::utimensat(AT_FDCWD, p.c_str(), nullptr, 0); }

Result<std::string> file_sha256(const fs::path& p) {
  auto bytes = read_file(p);
  if (!bytes) return bytes.error();
  return sha256_hex(*bytes);
}

Status remove_tree(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (ec) return Error{fmt::format("cannot remove {}: {}", p.string(), ec.message())};
  return ok_status();
}

std::optional<nlohmann::json> read_outcome(const fs::path& entry) {
  auto text = read_file(entry / kOutcome);
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

}  // namespace

// The flock'ed descriptor of every staging directory this process is building in.
struct CompileCache::StagingLocks {
  std::mutex mu;
  std::map<fs::path, int> fds;
  ~StagingLocks() {
    for (auto& [dir, fd] : fds) ::close(fd);
  }
  void add(const fs::path& dir, int fd) {
    std::lock_guard l(mu);
    fds[dir] = fd;
  }
  void release(const fs::path& dir) {
    std::lock_guard l(mu);
    if (auto it = fds.find(dir); it != fds.end()) {
      ::close(it->second);
      fds.erase(it);
    }
  }
  // A failed build's staging directory is removed by the compiler without telling the cache; a
  // removed directory has no links left, so its lock is closed here.
  void sweep() {
    std::lock_guard l(mu);
    for (auto it = fds.begin(); it != fds.end();) {
      struct stat st {};
      if (::fstat(it->second, &st) == 0 && st.st_nlink == 0) {
        ::close(it->second);
        it = fds.erase(it);
      } else {
        ++it;
      }
    }
  }
};

CacheLock::~CacheLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

Result<CacheOptions> apply_cache_config(CacheOptions options, const nlohmann::json& section) {
  if (!section.is_object()) return Error{"config: \"cache\" must be an object"};
  for (const auto& [key, v] : section.items()) {
    if (key == "max_mb") {
      if (!v.is_number() || v.get<double>() < 1)
        return Error{"config: cache.max_mb must be a number of megabytes, at least 1"};
      options.max_bytes = static_cast<std::uintmax_t>(v.get<double>() * (1 << 20));
    } else {
      return Error{fmt::format("config: unknown key cache.{} (known: max_mb)", key)};
    }
  }
  return options;
}

CompileCache::CompileCache(fs::path root, CacheOptions options)
    : dir_(std::move(root) / "compile" / "v1"),
      options_(std::move(options)),
      staging_locks_(std::make_shared<StagingLocks>()) {}

Result<CompileCache> CompileCache::open(fs::path root, CacheOptions options) {
  CompileCache cache(std::move(root), std::move(options));
  auto pruned = cache.prune();
  if (!pruned) return Error{fmt::format("compile cache: {} (set CUTEGEN_CACHE_DIR to a writable place)",
                                        pruned.error().message)};
  return cache;
}

void CompileCache::warn(const std::string& line) const {
  if (options_.warn) options_.warn(line);
  else std::fprintf(stderr, "cutegen: %s\n", line.c_str());
}

fs::path CompileCache::entry_dir(const std::string& key) const { return dir_ / key.substr(0, 2) / key; }

std::string CompileCache::damage(const fs::path& entry, const nlohmann::json& outcome) const {
  if (string_field(outcome, "verdict", "") != "ok") return "";  // no library to check
  std::string recorded = string_field(outcome, kHashKey, "");
  if (recorded.empty()) return "has no recorded library hash (made by an older cutegen)";
  auto actual = file_sha256(entry / kLibrary);
  if (!actual) return "has lost its kernel.so";
  if (*actual != recorded) return "has a kernel.so that does not match its recorded SHA-256 (cut short or changed on disk)";
  return "";
}

std::optional<nlohmann::json> CompileCache::lookup(const std::string& key) const {
  fs::path entry = entry_dir(key);
  auto outcome = read_outcome(entry);
  if (!outcome) return std::nullopt;  // none, or one a crash left unreadable: commit() replaces it
  if (auto why = damage(entry, *outcome); !why.empty()) {
    auto removed = discard_entry(key);
    warn(fmt::format("compile cache entry {} {}: {}", key.substr(0, 12), why,
                     removed ? "removed it, compiling again" : "compiling again (" + removed.error().message + ")"));
    return std::nullopt;
  }
  touch(entry);
  return outcome;
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

Result<fs::path> CompileCache::make_staging_dir() const {
  staging_locks_->sweep();
  auto dir = make_unique_dir(dir_ / "staging", "build-");
  if (!dir) return dir.error();
  int fd = ::open(dir->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    if (fd >= 0) ::close(fd);
    std::error_code ec;
    fs::remove(*dir, ec);
    return Error{fmt::format("cannot lock the staging directory {}: {}", dir->string(), std::strerror(e))};
  }
  staging_locks_->add(*dir, fd);
  return dir;
}

Status CompileCache::discard_entry(const std::string& key) const {
  // Renamed out of the way first, so a reader finds the whole entry or none; staging/ is where a
  // removal cut short by a crash is reaped later.
  auto trash = make_unique_dir(dir_ / "staging", "evict-");
  if (!trash) return trash.error();
  fs::path entry = entry_dir(key);
  if (::rename(entry.c_str(), trash->c_str()) != 0) {
    int e = errno;
    ::rmdir(trash->c_str());
    if (e == ENOENT) return ok_status();  // another process removed it first
    return Error{fmt::format("cannot remove {}: {}", entry.string(), std::strerror(e))};
  }
  return remove_tree(*trash);
}

Status CompileCache::commit(const fs::path& staging, const std::string& key) const {
  struct Release {  // the staging lock goes with the staging directory, however this ends
    const CompileCache& c;
    const fs::path& dir;
    ~Release() { c.staging_locks_->release(dir); }
  } release{*this, staging};

  // Seal: the library's hash goes into the entry, so every later hit can be checked against it.
  auto outcome = read_outcome(staging);
  if (!outcome) return Error{fmt::format("internal: {} has no readable {}", staging.string(), kOutcome)};
  if (string_field(*outcome, "verdict", "") == "ok") {
    auto hash = file_sha256(staging / kLibrary);
    if (!hash) return Error{fmt::format("cannot hash the built library: {}", hash.error().message)};
    (*outcome)[kHashKey] = *hash;
    if (auto w = write_file_atomic(staging / kOutcome, dump_json(*outcome, 2)); !w) return w;
  }

  fs::path target = entry_dir(key);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message())};
  auto intact = [&] {
    auto existing = read_outcome(target);
    return existing && damage(target, *existing).empty();
  };
  if (intact()) return remove_tree(staging);
  if (fs::exists(target, ec))  // damaged, or half an entry from an older crash
    if (auto d = discard_entry(key); !d) return d;
  if (::rename(staging.c_str(), target.c_str()) != 0) {
    int e = errno;
    if ((e == ENOTEMPTY || e == EEXIST) && intact()) return remove_tree(staging);
    return Error{fmt::format("cannot move {} to {}: {}", staging.string(), target.string(), std::strerror(e))};
  }
  touch(target);
  // The cache grew: back under the cap. A failure here costs disk, not this compile, so it is told
  // rather than returned.
  if (auto pruned = remove_unused(options_.max_bytes, std::chrono::seconds::max(), key); !pruned)
    warn(fmt::format("compile cache: cannot evict down to {} MB: {}", options_.max_bytes >> 20,
                     pruned.error().message));
  return ok_status();
}

Result<CacheContents> CompileCache::contents() const {
  CacheContents c;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return c;
  for (const auto& shard : fs::directory_iterator(dir_, ec)) {
    if (!is_shard(shard.path().filename().string()) || !shard.is_directory()) continue;
    std::error_code sec;
    for (const auto& entry : fs::directory_iterator(shard.path(), sec)) {
      if (!entry.is_directory()) continue;
      CacheEntryInfo info;
      info.key = entry.path().filename().string();
      auto outcome = read_outcome(entry.path());
      info.verdict = outcome ? string_field(*outcome, "verdict", "?") : "incomplete";
      info.bytes = tree_bytes(entry.path());
      std::error_code tec;
      info.last_used = fs::last_write_time(entry.path(), tec);
      c.total_bytes += info.bytes;
      c.entries.push_back(std::move(info));
    }
    if (sec) return Error{fmt::format("cannot list {}: {}", shard.path().string(), sec.message())};
  }
  if (ec) return Error{fmt::format("cannot list {}: {}", dir_.string(), ec.message())};
  std::error_code stec;
  for (const auto& s : fs::directory_iterator(dir_ / "staging", stec)) {
    ++c.staging_dirs;
    c.staging_bytes += tree_bytes(s.path());
  }
  std::sort(c.entries.begin(), c.entries.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) { return a.last_used > b.last_used; });
  return c;
}

Result<PruneResult> CompileCache::prune(std::optional<std::uintmax_t> max_bytes, const std::string& keep) const {
  return remove_unused(max_bytes.value_or(options_.max_bytes), options_.stale_staging, keep);
}

Result<PruneResult> CompileCache::clear() const { return remove_unused(0, std::chrono::seconds(0), ""); }

Result<PruneResult> CompileCache::remove_unused(std::uintmax_t max_bytes, std::chrono::seconds staging_age,
                                                const std::string& keep) const {
  PruneResult r;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return r;

  // Staging directories of compiles that died: old, and nobody holds their lock.
  if (staging_age != std::chrono::seconds::max()) {
    const auto now = fs::file_time_type::clock::now();
    std::vector<fs::path> old;
    for (const auto& s : fs::directory_iterator(dir_ / "staging", ec)) {
      std::error_code tec;
      auto mtime = s.last_write_time(tec);
      if (!tec && now - mtime >= staging_age) old.push_back(s.path());
    }
    for (const auto& s : old) {
      auto held = try_lock(s, O_RDONLY);
      if (!held) return held.error();
      if (!*held) {
        ++r.skipped_in_use;
        continue;
      }
      auto removed = remove_tree(s);
      ::close(**held);
      if (!removed) return removed.error();
      ++r.staging_reaped;
    }
  }

  // Entries, least recently used first, until the rest fit.
  auto c = contents();
  if (!c) return c.error();
  std::uintmax_t total = c->total_bytes;
  for (auto it = c->entries.rbegin(); it != c->entries.rend() && total > max_bytes; ++it) {
    if (it->key == keep) continue;
    auto held = try_lock(dir_ / "locks" / (it->key + ".lock"), O_RDWR | O_CREAT);
    if (!held) return held.error();
    if (!*held) {  // being compiled right now
      ++r.skipped_in_use;
      continue;
    }
    auto removed = discard_entry(it->key);
    ::close(**held);
    if (!removed) return removed.error();
    total -= it->bytes;
    r.freed_bytes += it->bytes;
    ++r.evicted;
  }

  // Lock files of keys that have no entry and no compile running: what evictions leave behind. (A
  // process that opened one just before it goes may compile alongside another; commit() keeps one.)
  std::vector<fs::path> orphans;
  for (const auto& l : fs::directory_iterator(dir_ / "locks", ec)) {
    std::string name = l.path().filename().string();
    if (!name.ends_with(".lock")) continue;
    std::string key = name.substr(0, name.size() - 5);
    std::error_code eec;
    if (key.size() >= 2 && !fs::exists(entry_dir(key), eec)) orphans.push_back(l.path());
  }
  for (const auto& l : orphans) {
    auto held = try_lock(l, O_RDWR);
    if (!held) return held.error();
    if (!*held) continue;
    ::unlink(l.c_str());
    ::close(**held);
  }
  return r;
}

}  // namespace cutegen
