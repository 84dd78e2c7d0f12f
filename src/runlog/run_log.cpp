#include "runlog/run_log.h"

#include <fmt/format.h>

#include "store/event_log.h"

namespace cutegen {

Result<RunLog> read_run_log(const std::filesystem::path& path) {
  auto loaded = load_event_log(path);
  if (!loaded) return loaded.error();
  RunLog log{.path = path, .dropped_torn_tail = loaded->dropped_torn_tail};
  for (std::size_t i = 0; i < loaded->events.size(); ++i) {
    const nlohmann::json& j = loaded->events[i];
    const int line = loaded->lines[i];
    // Logs from before the format stamp are format 1.
    const nlohmann::json& v = j.contains("v") ? j["v"] : nlohmann::json(1);
    if (!v.is_number_integer() || v.get<int>() < kOldestRunLogFormat || v.get<int>() > kRunLogFormat)
      return Error{fmt::format("{}:{} was written by another cutegen (run log format {}; this one reads formats {} to "
                               "{}): resume or report it with the cutegen that made it (its config.json names the "
                               "version), or start a new run",
                               path.string(), line, v.dump(), kOldestRunLogFormat, kRunLogFormat),
                   ErrorKind::cannot_resume};
    auto event = run_event_from_json(j, v.get<int>());
    if (!event)
      return Error{fmt::format("{}:{}: the logged {} event cannot be read ({}); the log is damaged or was edited: cut "
                               "the log before this line to resume from the event before it, or start a new run",
                               path.string(), line, j.value("type", "?"), event.error().message),
                   ErrorKind::cannot_resume};
    LoggedEvent e{.event = std::move(*event), .format = v.get<int>(), .line = line};
    if (j.contains("t") && j["t"].is_number()) e.t = j["t"].get<double>();
    log.events.push_back(std::move(e));
  }
  return log;
}

nlohmann::json run_log_line(const RunEvent& e, double t) {
  nlohmann::json j = to_json(e);
  j["v"] = kRunLogFormat;
  j["t"] = t;
  return j;
}

}  // namespace cutegen
