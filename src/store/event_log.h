#pragma once
// An append-only log of JSON events, one per line: the source of truth of a task (resume replays it).
//
// Each append is one write(2) of a whole line followed by fdatasync, so after a kill -9 the file
// holds every event whose append returned, plus at most one torn last line; loading drops a torn
// last line (and says so) instead of refusing the whole run.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cutegen {

struct LoadedLog {
  std::vector<nlohmann::json> events;
  std::vector<int> lines;          // the line of the file each event came from (blank lines are skipped)
  bool dropped_torn_tail = false;  // the last line was incomplete (killed mid-append) and was ignored
};

// Reads a log; a missing file is an empty log. A malformed line anywhere but at the end is an error
// naming the file and line (that is corruption, not a crash, and replaying past it would be wrong):
// each line must be a JSON object with a string "type" and, when it has one, a string "key".
Result<LoadedLog> load_event_log(const std::filesystem::path& path);

class EventLog {
 public:
  // Opens for appending (creating the file and its directory). If the file ends in a torn line it is
  // truncated to the last complete line first, so new events never continue a half-written one.
  static Result<EventLog> open(const std::filesystem::path& path);
  EventLog(EventLog&& other) noexcept;
  EventLog& operator=(EventLog&&) = delete;
  EventLog(const EventLog&) = delete;
  ~EventLog();

  Status append(const nlohmann::json& event);
  const std::filesystem::path& path() const { return path_; }

 private:
  EventLog(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace cutegen
