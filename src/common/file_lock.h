#pragma once
// Exclusive locks on files (flock), for two uses that share the mechanics:
//  * FileLock::try_lock — a task of a suite, which at most one scheduler may run (cutegen bench);
//  * DeviceLock — a GPU's measurements, which must never overlap (timing and profiling are exclusive
//    per GPU while compiles and LLM calls of other tasks go on). A process holds it only while the
//    judge measures, and while its reference worker ends (the CUDA context's teardown is GPU work); it
//    is reentrant within the process and records how long it was held.
// The flock, not the file, is the lock: a process that dies (kill -9) releases it with its
// descriptors, so a crash never leaves a lock stuck. Descriptors are O_CLOEXEC: no child keeps one.
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>

#include "common/result.h"

namespace cutegen {

class FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { release(); }

  // Locked now, or not: `held()` false when another process holds it (not an error). Error: the
  // file cannot be created or opened. The holder's PID and host are written into the file for messages.
  static Result<FileLock> try_lock(const std::filesystem::path& path);
  // Waits until the lock is free.
  static Result<FileLock> lock(const std::filesystem::path& path);
  // Who holds it, as the holder wrote it: "PID on HOST", or "unknown".
  static std::string holder(const std::filesystem::path& path);

  bool held() const { return fd_ >= 0; }
  void release();

 private:
  static Result<FileLock> acquire(const std::filesystem::path& path, bool wait);
  int fd_ = -1;
  std::filesystem::path path_;
};

// A device's measurement lock, shared by every cutegen process on the host that names the same file.
class DeviceLock {
 public:
  explicit DeviceLock(std::filesystem::path path) : path_(std::move(path)) {}

  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& o) noexcept : owner_(o.owner_) { o.owner_ = nullptr; }
    Hold& operator=(Hold&&) = delete;
    Hold(const Hold&) = delete;
    ~Hold();

   private:
    friend class DeviceLock;
    explicit Hold(DeviceLock* owner) : owner_(owner) {}
    DeviceLock* owner_ = nullptr;
  };

  // Blocks until this process holds the device; nested holds in one process share the lock.
  Result<Hold> hold();
  // Seconds this process has held the lock, and seconds it waited for it.
  double held_seconds() const;
  double waited_seconds() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  void leave();
  std::filesystem::path path_;
  mutable std::mutex mu_;
  int depth_ = 0;
  FileLock lock_;
  std::chrono::steady_clock::time_point since_;
  double held_s_ = 0, waited_s_ = 0;
};

// `holder` for the lock-free case: nullptr means "no lock", so callers can write
// `auto h = hold_device(options.device_lock)` without branching.
Result<DeviceLock::Hold> hold_device(DeviceLock* lock);

}  // namespace cutegen
