#include "store/run_files.h"

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen {
namespace fs = std::filesystem;

Result<fs::path> RunFiles::inside(const fs::path& relative) const {
  fs::path norm = relative.lexically_normal();
  if (norm.is_absolute() || norm.empty() || *norm.begin() == "..")
    return Error{fmt::format("artifact path '{}' leaves the run directory", relative.string())};
  fs::path full = dir_ / norm;
  std::error_code ec;
  fs::create_directories(full.parent_path(), ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", full.parent_path().string(), ec.message())};
  return full;
}

Status RunFiles::write(const fs::path& relative, const std::string& content) const {
  auto full = inside(relative);
  if (!full) return full.error();
  return write_file_atomic(*full, content);
}

Status RunFiles::copy_in(const fs::path& from, const fs::path& relative) const {
  auto full = inside(relative);
  if (!full) return full.error();
  fs::path tmp = full->string() + ".tmp";
  std::error_code ec;
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, *full, ec);
  if (ec) return Error{fmt::format("cannot copy {} to {}: {}", from.string(), full->string(), ec.message())};
  return ok_status();
}

}  // namespace cutegen
