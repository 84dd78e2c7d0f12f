#pragma once
// A precompiled header for the host compile. cudafe++ hands the host compiler one preprocessed file: the
// expansion of every header the candidate includes (~250k lines for CuTe, ~500k for a CUTLASS GEMM), then
// the candidate's own code, then the stub. Parsing that prefix is most of the host compile (1.5 of 1.7 s
// for an elementwise kernel, 4.5 of 5.3 s for the GEMM on a 2-core machine), and candidates that include
// the same headers have the same prefix byte for byte once the module id is the same (nvcc_compiler.cpp
// gives every build one id). So the prefix is compiled once into a GCC precompiled header, kept here, and
// each build's source becomes `#include "<store>/<key>/cutegen-host-prefix.h"` plus its own part, its
// sandbox given read-only access to that entry.
//
// Nothing is trusted that a build could change: an entry is found by the SHA-256 of the prefix and of the
// script that compiles it (flags, environment, compiler), and the host compile treats a .gch GCC cannot use
// as an error (-Werror=invalid-pch), after which the build runs again without it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace cutegen {

struct HostSourceSplit {
  std::string_view prefix;  // up to the candidate's own code
  std::string_view rest;    // from the line marker that starts it
};

// Below this the saving is not worth a ~150 MB file.
inline constexpr std::size_t kMinHostPrefixBytes = 1 << 20;

// Splits cudafe++'s host source where the candidate's own code starts: at the second line marker naming
// `source_name` (the first opens the file, before the headers' expansion). Nothing when there is no such
// marker or the prefix is shorter than `min_prefix` (a candidate with code before its includes).
std::optional<HostSourceSplit> split_host_source(std::string_view text, std::string_view source_name,
                                                 std::size_t min_prefix = kMinHostPrefixBytes);

// The host source that reads the prefix from `header` (an absolute path): its first line includes it (GCC
// uses a .gch only for an include before any other token, and looks for it beside the header).
std::string host_source_with_prefix_header(std::string_view rest, const std::filesystem::path& header);

inline constexpr std::size_t kHostPchEntries = 4;

// Where a compile cache's precompiled prefixes live: beside its compile/ tree, <root>/host-pch/v1, apart
// from its entries and their cap (cache.max_mb).
inline std::filesystem::path host_pch_dir(const std::filesystem::path& compile_cache_dir) {
  return compile_cache_dir.parent_path().parent_path() / "host-pch" / "v1";
}

// Precompiled prefixes, one directory per key (<dir>/<key>/{cutegen-host-prefix.h,.gch}), built in
// <dir>/tmp-* and renamed into place. At most `max_entries` are kept; the least recently used go first
// (a hit touches its directory). An entry is renamed away before it is removed: a build that opens it
// then finds it whole or not at all (and builds without it).
class HostPchStore {
 public:
  explicit HostPchStore(std::filesystem::path dir, std::size_t max_entries = kHostPchEntries)
      : dir_(std::move(dir)), max_entries_(max_entries) {}
  const std::filesystem::path& dir() const { return dir_; }

  // The key of a prefix compiled by `pch_script` (nvcc_plan.h) with the host compiler `compiler_version`.
  static std::string key_for(std::string_view prefix, std::string_view pch_script, std::string_view compiler_version);

  // The entry's directory, if it holds both files (touching it as used). Builds read the header and its
  // .gch there, with read-only access to that directory alone: nothing a build runs can change an entry.
  std::optional<std::filesystem::path> find(const std::string& key) const;
  // A fresh directory to build an entry in, with the prefix written as its header.
  Result<std::filesystem::path> start(std::string_view prefix) const;
  // Moves a built directory into place as `key` (another build's entry of that key wins), then evicts
  // down to max_entries.
  Status commit(const std::filesystem::path& built, const std::string& key) const;
  // Removes every entry and build directory; how many entries there were.
  Result<std::size_t> clear() const;
  struct Usage {
    std::size_t entries = 0;
    std::uintmax_t bytes = 0;  // of the entries
  };
  Result<Usage> usage() const;

 private:
  Status remove_entry(const std::filesystem::path& entry) const;

  std::filesystem::path dir_;
  std::size_t max_entries_;
};

}  // namespace cutegen
