#include "compile/host_pch.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/sha256.h"
#include "compile/nvcc_plan.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

// A line marker of the preprocessed source: `# <line> "<file>"`, flags after it or not.
bool is_marker_for(std::string_view line, std::string_view file) {
  if (line.size() < 2 || line[0] != '#' || line[1] != ' ') return false;
  std::size_t i = 2;
  const std::size_t digits = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == digits || i >= line.size() || line[i] != ' ') return false;
  line.remove_prefix(i + 1);
  return line.size() >= file.size() + 2 && line[0] == '"' && line.substr(1, file.size()) == file &&
         line[file.size() + 1] == '"';
}

bool is_entry_name(const std::string& name) {
  return name.size() == 64 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::optional<HostSourceSplit> split_host_source(std::string_view text, std::string_view source_name,
                                                 std::size_t min_prefix) {
  int markers = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (is_marker_for(text.substr(pos, end - pos), source_name) && ++markers == 2) {
      if (pos < min_prefix) return std::nullopt;
      return HostSourceSplit{text.substr(0, pos), text.substr(pos)};
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::string host_source_with_prefix_header(std::string_view rest, const fs::path& header) {
  return fmt::format("#include \"{}\"\n{}", header.string(), rest);
}

std::string HostPchStore::key_for(std::string_view prefix, std::string_view pch_script, std::string_view compiler_version) {
  Sha256 h;
  for (auto part : {std::string_view("cutegen-host-pch-v1"), compiler_version, pch_script, prefix})
    h.add(fmt::format("{}:", part.size())).add(part);
  return h.hex();
}

std::optional<fs::path> HostPchStore::find(const std::string& key) const {
  const fs::path entry = dir_ / key;
  std::error_code ec;
  if (!fs::is_regular_file(entry / kHostPrefixHeader, ec) ||
      !fs::is_regular_file(entry / (std::string(kHostPrefixHeader) + ".gch"), ec))
    return std::nullopt;
  fs::last_write_time(entry, fs::file_time_type::clock::now(), ec);  // used now (eviction is by age)
  return entry;
}

Result<fs::path> HostPchStore::start(std::string_view prefix) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir_.string(), ec.message())};
  // A build that was killed leaves its directory (up to a few hundred MB): gone after an hour. No header
  // takes that long to compile, and the compile's own timeout is shorter.
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code tec;
    if (it->path().filename().string().rfind("tmp-", 0) == 0 && fs::last_write_time(it->path(), tec) < stale && !tec)
      fs::remove_all(it->path(), tec);
  }
  auto built = make_unique_dir(dir_, "tmp-");
  if (!built) return built.error();
  if (auto w = write_file_atomic(*built / kHostPrefixHeader, std::string(prefix)); !w) {
    fs::remove_all(*built, ec);
    return w.error();
  }
  return built;
}

Status HostPchStore::remove_entry(const fs::path& entry) const {
  // Renamed first, so a build looking it up finds the whole entry or none.
  auto trash = make_unique_dir(dir_, "tmp-evict-");
  if (!trash) return trash.error();
  std::error_code ec;
  fs::rename(entry, *trash / "entry", ec);
  fs::remove_all(*trash, ec);
  if (ec) return Error{fmt::format("cannot remove {}: {}", entry.string(), ec.message())};
  return Ok{};
}

Status HostPchStore::commit(const fs::path& built, const std::string& key) const {
  std::error_code ec;
  fs::rename(built, dir_ / key, ec);
  if (ec && !find(key)) {
    // What is there is no whole entry (a damaged one: nothing here writes it so): replaced.
    if (auto removed = remove_entry(dir_ / key); !removed) return removed.error();
    ec.clear();
    fs::rename(built, dir_ / key, ec);
  }
  if (ec) {
    fs::remove_all(built, ec);  // an entry of this key got there first: the same bytes by construction
    return Ok{};
  }
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (is_entry_name(it->path().filename().string())) {
      std::error_code tec;
      auto t = fs::last_write_time(it->path(), tec);
      if (!tec) entries.emplace_back(t, it->path());
    }
  if (ec) return Error{fmt::format("cannot list {}: {}", dir_.string(), ec.message())};
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = max_entries_; i < entries.size(); ++i) {
    if (entries[i].second.filename() == key) continue;
    if (auto removed = remove_entry(entries[i].second); !removed) return removed.error();
  }
  return Ok{};
}

Result<std::size_t> HostPchStore::clear() const {
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return std::size_t{0};
  std::size_t entries = 0;
  std::vector<fs::path> all;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) all.push_back(it->path());
  if (ec) return Error{fmt::format("cannot list {}: {}", dir_.string(), ec.message())};
  for (const auto& p : all) {
    entries += is_entry_name(p.filename().string());
    fs::remove_all(p, ec);
    if (ec) return Error{fmt::format("cannot remove {}: {}", p.string(), ec.message())};
  }
  return entries;
}

Result<HostPchStore::Usage> HostPchStore::usage() const {
  Usage u;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return u;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_entry_name(it->path().filename().string())) continue;
    ++u.entries;
    std::error_code fec;
    for (fs::directory_iterator f(it->path(), fec), fend; !fec && f != fend; f.increment(fec)) {
      std::error_code sec;
      auto size = f->file_size(sec);
      if (!sec) u.bytes += size;
    }
  }
  if (ec) return Error{fmt::format("cannot list {}: {}", dir_.string(), ec.message())};
  return u;
}

}  // namespace cutegen
