#pragma once
// Resume by replay. The loop is deterministic given the answers it gets from the outside world (the
// LLM, the judge, the profiler), so a task's event log records each of those answers as it arrives.
// `--resume` runs the loop again from the start; every outside call the log already holds is answered
// from it, in order, and the first one it lacks is made for real. Decisions (accept, reject, stop)
// are recomputed, not trusted, and must reproduce the logged ones: a mismatch means the log belongs to
// a different problem or configuration, and resuming is refused with the position where they diverge.
// When the replay has consumed the whole log, the best kernel it arrived at must be the one the log's
// history names (runlog/run_history.h, the reading the reports use too).
// kill -9 therefore loses at most the calls in flight.
//
// The events are typed (runlog/run_events.h); JSON is read and written only in runlog/run_log.h.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "runlog/run_history.h"
#include "runlog/run_log.h"
#include "store/event_log.h"

namespace cutegen {

class Journal {
 public:
  // The format this cutegen writes; it replays logs of kOldestRunLogFormat and newer (run_events.h).
  static constexpr int kFormat = kRunLogFormat;

  // resume == false: the log must not exist yet (or be empty). resume == true: replay what it holds,
  // which must read back (read_run_log: a cannot_resume error names the line and why). A log that is
  // missing or empty (the run was stopped after claiming its directory, before its first event) is no
  // error: the run has done nothing that could be done twice, so it starts from the beginning, and
  // nothing_recorded() says so.
  static Result<Journal> open(const std::filesystem::path& events_file, bool resume);

  // The outside answer of kind E keyed by `key` (e.g. a hash of the request): the logged one while
  // replaying, nullopt once the log is exhausted (make the call, then `record` it). Error: the log
  // holds another event at this point.
  template <class E>
  Result<std::optional<E>> recall(const std::string& key) {
    if (!replaying()) return std::optional<E>{};
    const RunEvent& logged = logged_[cursor_].event;
    const E* e = std::get_if<E>(&logged);
    if (!e || event_key(logged) != key) return divergence(fmt_expected(to_string(kind_of(RunEvent{E{}})), key));
    std::optional<E> out(*e);
    if (auto s = consumed(); !s) return s.error();
    return out;
  }

  // Records an event (an outside answer or a decision). While replaying, the logged event at the
  // cursor must be of the same kind and key, and a decision must reach the same outcome; it is
  // consumed, not rewritten.
  Status record(const RunEvent& event);

  // The loop's best kernel changed (the sha256 of its source): what the end of the replay is checked by.
  void note_best(std::string source_sha256) { best_ = std::move(source_sha256); }

  bool replaying() const { return cursor_ < logged_.size(); }
  size_t replayed() const { return replayed_; }
  bool dropped_torn_tail() const { return dropped_torn_tail_; }
  // A resume of a log that held no event, not even a torn one.
  bool nothing_recorded() const { return nothing_recorded_; }
  // What the log held when it was opened, as the reports read it.
  const RunHistory& logged_history() const { return history_; }
  const std::filesystem::path& path() const { return log_.path(); }

 private:
  Journal(EventLog log, RunLog logged, bool nothing_recorded)
      : log_(std::move(log)), logged_(std::move(logged.events)), history_(run_history(logged_)),
        dropped_torn_tail_(logged.dropped_torn_tail), nothing_recorded_(nothing_recorded) {}
  static std::string fmt_expected(std::string_view type, const std::string& key);
  Error divergence(const std::string& expected) const;
  // Moves past the event at the cursor; at the end of the log, checks where the replay arrived.
  Status consumed();

  EventLog log_;
  std::vector<LoggedEvent> logged_;
  RunHistory history_;
  size_t cursor_ = 0;
  size_t replayed_ = 0;
  std::optional<std::string> best_;  // note_best's last word
  bool dropped_torn_tail_ = false;
  bool nothing_recorded_ = false;
};

}  // namespace cutegen
