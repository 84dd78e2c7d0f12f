#pragma once
// A run's events.jsonl read into typed events: the one way the log is read, by `--resume` (the
// journal) and by the reports (the run view), so both see the same events or the same error.
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "runlog/run_events.h"

namespace cutegen {

struct LoggedEvent {
  RunEvent event;
  int format = kRunLogFormat;  // the line's "v"
  std::optional<double> t;     // when it was recorded (seconds since the epoch)
  int line = 0;                // its line in the file
};

struct RunLog {
  std::filesystem::path path;
  std::vector<LoggedEvent> events;
  bool dropped_torn_tail = false;  // the last line was cut short by a kill and is not part of the log
};

// Reads the log (a missing file is an empty log; store/event_log.h says how a torn last line is
// handled). Error, of kind cannot_resume and naming the file and line: a line of a format this
// cutegen does not read, or one that does not read back as its event.
Result<RunLog> read_run_log(const std::filesystem::path& path);

// The line the journal appends for `e`: its JSON stamped with this cutegen's format and the time `t`.
nlohmann::json run_log_line(const RunEvent& e, double t);

}  // namespace cutegen
