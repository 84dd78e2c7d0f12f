#include "agent/journal.h"

#include <chrono>

#include <fmt/format.h>

namespace cutegen {
namespace {

std::string describe_event(const nlohmann::json& e) {
  std::string s = e.value("type", "?");
  if (e.contains("key") && e["key"].is_string()) s += " " + e["key"].get<std::string>().substr(0, 12);
  if (e.contains("what") && e["what"].is_string()) s += " (" + e["what"].get<std::string>() + ")";
  for (const char* field : {"outcome", "reason"})
    if (e.contains(field) && e[field].is_string()) s += fmt::format(" {}={}", field, e[field].get<std::string>());
  return s;
}

}  // namespace

Result<Journal> Journal::open(const std::filesystem::path& events_file, bool resume) {
  auto loaded = load_event_log(events_file);
  if (!loaded) return loaded.error();
  if (!resume && !loaded->events.empty())
    return Error{fmt::format("{} already holds a run; pass --resume to continue it or choose another --out directory",
                             events_file.parent_path().string())};
  // Stopped before its first event (cutegen bench interrupted while the task was starting): there is
  // nothing to replay and nothing to redo, so the resume is a start from the beginning, not an error.
  const bool nothing_recorded = resume && loaded->events.empty() && !loaded->dropped_torn_tail;
  for (std::size_t i = 0; i < loaded->events.size(); ++i) {
    const auto& v = loaded->events[i].value("v", nlohmann::json(1));
    if (v != kFormat)
      return Error{fmt::format("cannot resume: {}:{} was written by another cutegen (run log format {}, this one "
                               "reads format {}): finish the run with the cutegen that started it (its config.json "
                               "names the version), or start a new run",
                               events_file.string(), loaded->lines[i], v.dump(), kFormat),
                   ErrorKind::cannot_resume};
  }
  auto log = EventLog::open(events_file);
  if (!log) return log.error();
  return Journal(std::move(*log), std::move(*loaded), nothing_recorded);
}

Error Journal::divergence(const nlohmann::json& expected) const {
  return Error{fmt::format("cannot resume: event {} of {} is {}, but this run now produces {} — the log was written "
                           "for a different problem, kernel prompt or configuration; resume with the same options or "
                           "start a new run",
                           cursor_ + 1, log_.path().string(), describe_event(logged_[cursor_]),
                           describe_event(expected)),
               ErrorKind::cannot_resume};
}

Result<std::optional<nlohmann::json>> Journal::recall(const std::string& type, const std::string& key) {
  if (!replaying()) return std::optional<nlohmann::json>{};
  const auto& e = logged_[cursor_];
  nlohmann::json expected = {{"type", type}, {"key", key}};
  if (e.value("type", "") != type || e.value("key", "") != key) return divergence(expected);
  ++cursor_;
  ++replayed_;
  return std::optional<nlohmann::json>{e};
}

Result<nlohmann::json> Journal::payload(const std::string& field, nlohmann::json::value_t kind) const {
  const nlohmann::json& e = logged_.at(cursor_ - 1);  // recall() just consumed it
  auto it = e.find(field);
  if (it == e.end()) return malformed(fmt::format("it has no \"{}\"", field));
  if (it->type() != kind) {
    nlohmann::json want(kind);
    return malformed(fmt::format("its \"{}\" is {} where {} was expected", field, it->type_name(), want.type_name()));
  }
  return *it;
}

Error Journal::malformed(const std::string& why) const {
  const size_t i = cursor_ - 1;
  return Error{fmt::format("{}:{}: the logged {} event is malformed ({}); cut the log before this line to resume "
                           "from the event before it, or start a new run",
                           log_.path().string(), lines_.at(i), logged_.at(i).value("type", "?"), why),
               ErrorKind::cannot_resume};
}

Status Journal::record(nlohmann::json event) {
  if (replaying()) {
    const auto& e = logged_[cursor_];
    if (e.value("type", "") != event.value("type", "") || e.value("key", "") != event.value("key", ""))
      return divergence(event);
    // A decision recomputed from replayed answers must come out the same, not only under the same key:
    // otherwise a changed option (say the minimum gain) would silently give a different run.
    if (event.value("type", "") == "decision")
      for (const char* field : {"outcome", "reason"})
        if (e.value(field, nlohmann::json()) != event.value(field, nlohmann::json())) return divergence(event);
    ++cursor_;
    ++replayed_;
    return ok_status();
  }
  event["v"] = kFormat;
  event["t"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return log_.append(event);
}

}  // namespace cutegen
