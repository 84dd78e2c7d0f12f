#include "common/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cutegen {
namespace fs = std::filesystem;

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

void FileLock::release() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  fd_ = -1;
}

Result<FileLock> FileLock::acquire(const fs::path& path, bool wait) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // another user's lock file
  if (fd < 0) return Error{fmt::format("cannot open the lock file {}: {}", path.string(), std::strerror(errno))};
  while (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) return FileLock();
    return Error{fmt::format("cannot lock {}: {}", path.string(), std::strerror(e))};
  }
  // Several users may share a device lock in /tmp; the mode above is cut by the umask.
  ::fchmod(fd, 0666);
  // "PID HOST": suite directories are shared between nodes, where a PID alone names nothing.
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string pid = fmt::format("{} {}\n", ::getpid(), host);
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  FileLock lock;
  lock.fd_ = fd;
  lock.path_ = path;
  return lock;
}

Result<FileLock> FileLock::try_lock(const fs::path& path) { return acquire(path, false); }
Result<FileLock> FileLock::lock(const fs::path& path) { return acquire(path, true); }

std::string FileLock::holder(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "unknown";
  char buf[300] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  s = s.substr(0, s.find('\n'));
  std::string pid = s.substr(0, s.find(' '));
  if (pid.empty() || !std::all_of(pid.begin(), pid.end(), ::isdigit)) return "unknown";
  std::string host = s.find(' ') == std::string::npos ? "" : s.substr(s.find(' ') + 1);
  return host.empty() ? pid : pid + " on " + host;
}

Result<DeviceLock::Hold> DeviceLock::hold() {
  std::lock_guard<std::mutex> g(mu_);
  if (depth_ == 0) {
    auto t0 = std::chrono::steady_clock::now();
    auto l = FileLock::lock(path_);
    if (!l) return l.error();
    lock_ = std::move(*l);
    since_ = std::chrono::steady_clock::now();
    waited_s_ += std::chrono::duration<double>(since_ - t0).count();
  }
  ++depth_;
  return Hold(this);
}

void DeviceLock::leave() {
  std::lock_guard<std::mutex> g(mu_);
  if (--depth_ > 0) return;
  held_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
  lock_.release();
}

double DeviceLock::held_seconds() const {
  std::lock_guard<std::mutex> g(mu_);
  double now = depth_ > 0 ? std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count() : 0;
  return held_s_ + now;
}

double DeviceLock::waited_seconds() const {
  std::lock_guard<std::mutex> g(mu_);
  return waited_s_;
}

DeviceLock::Hold::~Hold() {
  if (owner_) owner_->leave();
}

Result<DeviceLock::Hold> hold_device(DeviceLock* lock) {
  if (!lock) return DeviceLock::Hold();
  return lock->hold();
}

}  // namespace cutegen
