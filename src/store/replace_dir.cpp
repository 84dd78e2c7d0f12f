#include "store/replace_dir.h"

#include <fcntl.h>
#include <stdio.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

Status remove_tree(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (ec) return Error{fmt::format("cannot remove {}: {}", p.string(), ec.message())};
  return ok_status();
}

}  // namespace

Result<ReplacedDir> replace_dir(const fs::path& complete, const fs::path& target) {
  ReplacedDir out;
  if (::renameat2(AT_FDCWD, complete.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) return out;
  if (errno == EEXIST) {
    if (::renameat2(AT_FDCWD, complete.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      if (auto r = remove_tree(complete); !r) return r.error();  // the old directory, under the new one's name
      return out;
    }
  }
  int e = errno;
  if (e != EINVAL && e != ENOSYS && e != EOPNOTSUPP)
    return Error{fmt::format("cannot move {} to {}: {}", complete.string(), target.string(), std::strerror(e))};
  // No renameat2 flags on this filesystem: move the old one aside, then the new one in.
  out.in_one_step = false;
  std::error_code ec;
  fs::path old;
  if (fs::exists(target, ec)) {
    auto aside = make_unique_dir(target.parent_path(), target.filename().string() + ".old-");
    if (!aside) return aside.error();
    old = *aside;
    if (::rename(target.c_str(), old.c_str()) != 0)
      return Error{fmt::format("cannot move {} aside: {}", target.string(), std::strerror(errno))};
  }
  if (::rename(complete.c_str(), target.c_str()) != 0) {
    int err = errno;
    if (!old.empty()) ::rename(old.c_str(), target.c_str());  // put the previous one back
    return Error{fmt::format("cannot move {} to {}: {}", complete.string(), target.string(), std::strerror(err))};
  }
  if (!old.empty())
    if (auto r = remove_tree(old); !r) return r.error();
  return out;
}

Status remove_replace_leftovers(const fs::path& target) {
  std::error_code ec;
  const std::string tmp = target.filename().string() + ".tmp-", old = target.filename().string() + ".old-";
  std::vector<fs::path> leftovers;
  for (const auto& e : fs::directory_iterator(target.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    if (name.starts_with(tmp) || name.starts_with(old)) leftovers.push_back(e.path());
  }
  if (ec) return Error{fmt::format("cannot list {}: {}", target.parent_path().string(), ec.message())};
  for (const auto& p : leftovers)
    if (auto r = remove_tree(p); !r) return r;
  return ok_status();
}

}  // namespace cutegen
