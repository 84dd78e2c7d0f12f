#pragma once
// A run directory and the exclusive right to write it.
//
// `--out` may name any path, so before a run writes anything the directory is checked: a fresh run
// takes only a missing or empty directory, `--resume` only a directory cutegen made. A run holds an
// flock on `.cutegen-lock` inside the directory for its whole life (fresh and resumed alike), so a
// second cutegen on the same directory fails at once and names the process that holds it, instead
// of interleaving its events with the first one's. The lock file holds the holder's PID (for that
// message only: the flock, not the file, is the lock, so a crashed holder never leaves it stuck).
//   .cutegen-run   marker: what makes a directory a cutegen run (format, creation time, version)
//   .cutegen-lock  the lock
// Directories from before the marker existed are recognised by their events.jsonl.
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace cutegen {

inline constexpr const char* kRunMarkerFile = ".cutegen-run";
inline constexpr const char* kRunLockFile = ".cutegen-lock";

enum class RunDirKind { missing, empty, cutegen_run, other, not_a_directory };

struct RunDirState {
  RunDirKind kind = RunDirKind::missing;
  std::vector<std::string> names;  // what an `other` directory holds (the first few names, sorted)
  size_t count = 0;                // how many entries it holds
};

// What is at `dir` now (the lock file alone does not make a directory non-empty).
RunDirState inspect_run_dir(const std::filesystem::path& dir);

class RunDir {
 public:
  enum class Mode { fresh, resume };

  // The directory the user named. fresh: created if missing; must be empty. resume: must be a run.
  static Result<RunDir> open(const std::filesystem::path& dir, Mode mode, const std::string& version);
  // A new directory `<parent>/<stem>-<YYYYmmdd-HHMMSS-mmm>-<4 hex>`, created with mkdir (which fails
  // when the name exists, so two runs started in the same millisecond still get their own).
  static Result<RunDir> create_unique(const std::filesystem::path& parent, const std::string& stem,
                                      const std::string& version);

  RunDir(RunDir&& other) noexcept;
  RunDir& operator=(RunDir&&) = delete;
  RunDir(const RunDir&) = delete;
  ~RunDir();  // releases the lock

  const std::filesystem::path& path() const { return dir_; }
  bool resumed() const { return mode_ == Mode::resume; }

  // A fresh run that failed before doing anything worth keeping (no GPU, nvcc missing) removes what
  // it wrote, and the directory itself when it made it, so a failed start leaves nothing behind.
  // Resumed runs keep everything. The lock is released either way; Error names what could not be removed.
  Status abandon();

 private:
  RunDir(std::filesystem::path dir, int lock_fd, Mode mode, bool created)
      : dir_(std::move(dir)), lock_fd_(lock_fd), mode_(mode), created_dir_(created) {}
  static Result<RunDir> claim(const std::filesystem::path& dir, Mode mode, bool created, const std::string& version);

  std::filesystem::path dir_;
  int lock_fd_ = -1;
  Mode mode_ = Mode::fresh;
  bool created_dir_ = false;
};

}  // namespace cutegen
