#include "store/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/fs.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

constexpr size_t kNamesShown = 3;

std::string listing(const RunDirState& s) {
  std::string out;
  for (const auto& n : s.names) out += (out.empty() ? "" : ", ") + n;
  if (s.count > s.names.size()) out += fmt::format(" and {} more", s.count - s.names.size());
  return out;
}

std::string local_stamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{}-{:03d}", buf, ms);
}

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The PID the lock's holder wrote, for the message only.
std::string holder_of(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "pid unknown";
  std::string s(buf, static_cast<size_t>(n));
  s = s.substr(0, s.find('\n'));
  if (s.empty() || !std::all_of(s.begin(), s.end(), ::isdigit)) return "pid unknown";
  return "pid " + s;
}

Status write_pid(int fd, const fs::path& file) {
  std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    return Error{fmt::format("cannot write {}: {}", file.string(), std::strerror(errno))};
  return ok_status();
}

Error refusal(const fs::path& dir, const RunDirState& s, RunDir::Mode mode) {
  const std::string d = dir.string();
  switch (s.kind) {
    case RunDirKind::not_a_directory: return Error{fmt::format("{} exists and is not a directory; choose another --out", d)};
    case RunDirKind::cutegen_run:
      return Error{fmt::format("{} already holds a cutegen run: add --resume to continue it, or choose another --out", d)};
    case RunDirKind::other:
      return mode == RunDir::Mode::fresh
                 ? Error{fmt::format("{} is not empty and is not a cutegen run directory (it holds {}); choose another "
                                     "--out (--resume continues only runs cutegen made)",
                                     d, listing(s))}
                 : Error{fmt::format("{} is not a cutegen run directory (it holds {}); --resume continues only runs "
                                     "cutegen made",
                                     d, listing(s))};
    case RunDirKind::missing: return Error{fmt::format("nothing to resume: {} does not exist", d)};
    case RunDirKind::empty: return Error{fmt::format("nothing to resume: {} is empty", d)};
  }
  return Error{"unreachable"};
}

bool acceptable(RunDirKind kind, RunDir::Mode mode) {
  if (mode == RunDir::Mode::resume) return kind == RunDirKind::cutegen_run;
  return kind == RunDirKind::missing || kind == RunDirKind::empty;
}

}  // namespace

RunDirState inspect_run_dir(const fs::path& dir) {
  RunDirState s;
  std::error_code ec;
  auto st = fs::symlink_status(dir, ec);
  if (ec || st.type() == fs::file_type::not_found) return s;
  // A symlink to a directory is followed: users point --out at a scratch disk that way.
  if (!fs::is_directory(dir, ec)) {
    s.kind = RunDirKind::not_a_directory;
    return s;
  }
  bool marker = false, legacy = false;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name == kRunLockFile) continue;
    if (name == kRunMarkerFile) marker = true;
    if (name == "events.jsonl") legacy = true;  // runs made before the marker existed
    names.push_back(name);
  }
  if (ec) {  // unreadable: say what it is rather than guess
    s.kind = RunDirKind::other;
    s.names = {fmt::format("unreadable: {}", ec.message())};
    s.count = 1;
    return s;
  }
  s.count = names.size();
  if (names.empty()) {
    s.kind = RunDirKind::empty;
  } else if (marker || legacy) {
    s.kind = RunDirKind::cutegen_run;
  } else {
    s.kind = RunDirKind::other;
    std::sort(names.begin(), names.end());
    names.resize(std::min(names.size(), kNamesShown));
    s.names = std::move(names);
  }
  return s;
}

Result<RunDir> RunDir::open(const fs::path& dir, Mode mode, const std::string& version) {
  auto state = inspect_run_dir(dir);
  if (!acceptable(state.kind, mode)) return refusal(dir, state, mode);
  bool created = false;
  if (state.kind == RunDirKind::missing) {
    std::error_code ec;
    if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
    if (ec) return Error{fmt::format("cannot create {}: {}", dir.parent_path().string(), ec.message())};
    if (::mkdir(dir.c_str(), 0755) == 0) {
      created = true;
    } else if (errno != EEXIST) {
      return Error{fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno))};
    }
    // EEXIST: another process made it just now; claim() looks again under the lock.
  }
  return claim(dir, mode, created, version);
}

Result<RunDir> RunDir::create_unique(const fs::path& parent, const std::string& stem, const std::string& version) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", parent.string(), ec.message())};
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    fs::path dir = parent / fmt::format("{}-{}-{:04x}", stem, local_stamp(), rd() & 0xffffu);
    if (::mkdir(dir.c_str(), 0755) == 0) return claim(dir, Mode::fresh, true, version);
    if (errno != EEXIST) return Error{fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno))};
  }
  return Error{fmt::format("cannot find a free run directory name under {}; pass --out DIR", parent.string())};
}

Result<RunDir> RunDir::claim(const fs::path& dir, Mode mode, bool created, const std::string& version) {
  fs::path lock_file = dir / kRunLockFile;
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", lock_file.string(), std::strerror(errno))};
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    std::string who = e == EWOULDBLOCK ? holder_of(fd) : "";
    ::close(fd);
    if (e == EWOULDBLOCK)
      return Error{fmt::format("{} is in use by another cutegen run ({}); wait for it to end or choose another --out",
                               dir.string(), who)};
    return Error{fmt::format("cannot lock {}: {}", lock_file.string(), std::strerror(e))};
  }
  RunDir run(dir, fd, mode, created);  // from here on, the destructor releases the lock
  // Looked at again under the lock: another run may have claimed the directory since the first look.
  auto state = inspect_run_dir(dir);
  if (!acceptable(state.kind, mode)) return refusal(dir, state, mode);
  if (auto w = write_pid(fd, lock_file); !w) return w.error();
  if (mode == Mode::fresh || !fs::exists(dir / kRunMarkerFile)) {
    nlohmann::json marker = {{"format", "cutegen-run/1"}, {"created", iso_now()}, {"cutegen", version}};
    if (auto w = write_file_atomic(dir / kRunMarkerFile, marker.dump(2) + "\n"); !w) return w.error();
  }
  return Result<RunDir>(std::move(run));
}

RunDir::RunDir(RunDir&& other) noexcept
    : dir_(std::move(other.dir_)), lock_fd_(other.lock_fd_), mode_(other.mode_), created_dir_(other.created_dir_) {
  other.lock_fd_ = -1;
}

RunDir::~RunDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

Status RunDir::abandon() {
  if (lock_fd_ < 0) return ok_status();
  Status out = ok_status();
  if (mode_ == Mode::fresh) {
    // The directory was empty when this run claimed it, and the lock kept everyone else out since:
    // everything in it is this run's own.
    std::error_code ec;
    std::vector<fs::path> mine;
    for (const auto& e : fs::directory_iterator(dir_, ec))
      if (e.path().filename() != kRunLockFile) mine.push_back(e.path());
    for (const auto& p : mine)
      if (fs::remove_all(p, ec); ec && out.ok()) out = Error{fmt::format("cannot remove {}: {}", p.string(), ec.message())};
    ::unlink((dir_ / kRunLockFile).c_str());
    if (created_dir_ && out.ok() && ::rmdir(dir_.c_str()) != 0)
      out = Error{fmt::format("cannot remove {}: {}", dir_.string(), std::strerror(errno))};
  }
  ::close(lock_fd_);
  lock_fd_ = -1;
  return out;
}

}  // namespace cutegen
