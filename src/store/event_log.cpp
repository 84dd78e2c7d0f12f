#include "store/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/json_text.h"

namespace cutegen {
namespace fs = std::filesystem;

Result<LoadedLog> load_event_log(const fs::path& path) {
  LoadedLog out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("cannot read the event log {}: {}", path.string(), std::strerror(errno))};
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool last = nl == std::string::npos;
    std::string line = text.substr(pos, last ? std::string::npos : nl - pos);
    pos = last ? text.size() : nl + 1;
    ++line_no;
    if (line.empty()) continue;
    if (last) {
      // No newline: the append was cut short, even when what made it to disk happens to parse.
      // EventLog::open cuts exactly this line, so the loader must not replay it either.
      out.dropped_torn_tail = true;
      break;
    }
    auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    std::string wrong;
    if (parsed.is_discarded() || !parsed.is_object()) wrong = "not a JSON object";
    else if (!parsed.contains("type") || !parsed["type"].is_string()) wrong = "no string \"type\"";
    else if (parsed.contains("key") && !parsed["key"].is_string()) wrong = "its \"key\" is not a string";
    if (!wrong.empty()) {
      return Error{fmt::format("{}:{}: the event log is corrupt ({}); move the run directory aside and start again, "
                               "or cut the log before this line to resume from the event before it",
                               path.string(), line_no, wrong),
                   ErrorKind::cannot_resume};
    }
    out.lines.push_back(line_no);
    out.events.push_back(std::move(parsed));
  }
  return out;
}

Result<EventLog> EventLog::open(const fs::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message())};
  // Cut a torn tail so the next event starts on a line of its own.
  if (fs::exists(path, ec)) {
    auto text = std::ifstream(path, std::ios::binary);
    std::stringstream b;
    b << text.rdbuf();
    std::string s = b.str();
    if (!s.empty() && s.back() != '\n') {
      size_t keep = s.rfind('\n');
      keep = keep == std::string::npos ? 0 : keep + 1;
      fs::resize_file(path, keep, ec);
      if (ec) return Error{fmt::format("cannot repair the torn end of {}: {}", path.string(), ec.message())};
    }
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot open the event log {}: {}", path.string(), std::strerror(errno))};
  return EventLog(path, fd);
}

EventLog::EventLog(EventLog&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

EventLog::~EventLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status EventLog::append(const nlohmann::json& event) {
  std::string line = dump_json(event) + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {  // O_APPEND: a short write continues at the end, still inside this one line
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("cannot append to {}: {}", path_.string(), std::strerror(errno))};
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0)
    return Error{fmt::format("cannot sync {}: {}", path_.string(), std::strerror(errno))};
  return ok_status();
}

}  // namespace cutegen
