#include "common/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace cutegen {
namespace fs = std::filesystem;

Result<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("cannot read {}: {}", path.string(), std::strerror(errno))};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status write_file_atomic(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::string tmpl = path.string() + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return Error{fmt::format("cannot write {}: {}", path.string(), std::strerror(errno))};
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      int e = errno;
      ::close(fd);
      ::unlink(name.data());
      return Error{fmt::format("cannot write {}: {}", path.string(), std::strerror(e))};
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  ::fchmod(fd, 0644);
  ::fsync(fd);
  ::close(fd);
  if (::rename(name.data(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(name.data());
    return Error{fmt::format("cannot replace {}: {}", path.string(), std::strerror(e))};
  }
  return ok_status();
}

Result<fs::path> make_unique_dir(const fs::path& parent, const std::string& prefix) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Error{fmt::format("cannot create directory {}: {}", parent.string(), ec.message())};
  std::string tmpl = (parent / (prefix + "XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    return Error{fmt::format("cannot create a directory under {}: {}", parent.string(), std::strerror(errno))};
  return fs::path(name.data());
}

}  // namespace cutegen
