#pragma once
#include <filesystem>
#include <string>

#include "common/result.h"

namespace cutegen {

Result<std::string> read_file(const std::filesystem::path& path);

// Writes to a temporary file beside `path`, fsyncs, then renames: readers see the old or the new
// content, never a torn file, and a kill -9 mid-write leaves the old file intact.
Status write_file_atomic(const std::filesystem::path& path, const std::string& content);

// A fresh, uniquely named directory under `parent` (created if needed).
Result<std::filesystem::path> make_unique_dir(const std::filesystem::path& parent, const std::string& prefix);

}  // namespace cutegen
