#include "agent/journal.h"

#include <chrono>

#include <fmt/format.h>

namespace cutegen {

Result<Journal> Journal::open(const std::filesystem::path& events_file, bool resume) {
  auto logged = read_run_log(events_file);
  if (!logged) {
    Error e = logged.error();
    if (e.kind == ErrorKind::cannot_resume && resume) e.message = "cannot resume: " + e.message;
    return e;
  }
  if (!resume && !logged->events.empty())
    return Error{fmt::format("{} already holds a run; pass --resume to continue it or choose another --out directory",
                             events_file.parent_path().string())};
  // Stopped before its first event (cutegen bench interrupted while the task was starting): there is
  // nothing to replay and nothing to redo, so the resume is a start from the beginning, not an error.
  const bool nothing_recorded = resume && logged->events.empty() && !logged->dropped_torn_tail;
  auto log = EventLog::open(events_file);
  if (!log) return log.error();
  return Journal(std::move(*log), std::move(*logged), nothing_recorded);
}

std::string Journal::fmt_expected(std::string_view type, const std::string& key) {
  return fmt::format("{} {}", type, key.substr(0, 12));
}

Error Journal::divergence(const std::string& expected) const {
  return Error{fmt::format("cannot resume: event {} of {} (line {}) is {}, but this run now produces {} — the log was "
                           "written for a different problem, kernel prompt or configuration; resume with the same "
                           "options or start a new run",
                           cursor_ + 1, log_.path().string(), logged_[cursor_].line, describe(logged_[cursor_].event),
                           expected),
               ErrorKind::cannot_resume};
}

Status Journal::consumed() {
  ++cursor_;
  ++replayed_;
  if (replaying()) return ok_status();
  // The whole log is replayed: the loop, recomputing every decision, must stand on the kernel the
  // log's history (the reports' reading of it) calls the best.
  const HistoryAttempt* logged_best = history_.best_attempt();
  std::optional<std::string> expected;
  if (logged_best) expected = logged_best->source_sha256;
  if (expected != best_)
    return Error{fmt::format("cannot resume: replaying {} arrives at {} as the best kernel, but its history names {} — "
                             "the log was edited or written by a cutegen that labelled its evaluations differently; "
                             "start a new run",
                             log_.path().string(), best_ ? "kernel " + best_->substr(0, 12) : "no kernel",
                             logged_best ? fmt::format("attempt {} ({})", logged_best->index, logged_best->label.text())
                                         : "none"),
                 ErrorKind::cannot_resume};
  return ok_status();
}

Status Journal::record(const RunEvent& event) {
  if (replaying()) {
    const RunEvent& logged = logged_[cursor_].event;
    // A decision recomputed from replayed answers must come out the same, not only under the same key:
    // otherwise a changed option (say the minimum gain) would silently give a different run.
    if (kind_of(logged) != kind_of(event) || event_key(logged) != event_key(event) ||
        decision_outcome(logged) != decision_outcome(event))
      return divergence(describe(event));
    return consumed();
  }
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return log_.append(run_log_line(event, now));
}

}  // namespace cutegen
