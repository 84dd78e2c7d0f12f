#pragma once
// The artifacts of a run directory (prompts, answers, kernels, evaluations per step; best/), written
// atomically so a reader or a kill -9 never leaves a half file. Artifacts are for people and reports;
// resume never reads them (the event log is the source of truth).
#include <filesystem>
#include <string>

#include "common/result.h"

namespace cutegen {

class RunFiles {
 public:
  explicit RunFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // `relative` must stay inside the run directory.
  Status write(const std::filesystem::path& relative, const std::string& content) const;
  Status copy_in(const std::filesystem::path& from, const std::filesystem::path& relative) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  Result<std::filesystem::path> inside(const std::filesystem::path& relative) const;
  std::filesystem::path dir_;
};

}  // namespace cutegen
