#pragma once
// Resume by replay. The loop is deterministic given the answers it gets from the outside world (the
// LLM, the judge, the profiler), so a task's event log records each of those answers as it arrives.
// `--resume` runs the loop again from the start; every outside call the log already holds is answered
// from it, in order, and the first one it lacks is made for real. Decisions (accept, reject, stop)
// are recomputed, not trusted, and must reproduce the logged ones: a mismatch means the log belongs to
// a different problem or configuration, and resuming is refused with the position where they diverge.
// kill -9 therefore loses at most the call in flight.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/event_log.h"

namespace cutegen {

class Journal {
 public:
  // The layout of the events this cutegen writes, stamped into each as "v" (absent: 1). Format 2
  // logs the typed evaluation record (common/evaluation.h) and the run's example kernel; a log of
  // another format is refused when resuming rather than half-read.
  static constexpr int kFormat = 2;

  // resume == false: the log must not exist yet (or be empty). resume == true: replay what it holds,
  // which must be of kFormat (a cannot_resume error names the format it has). A log that is missing or
  // empty (the run was stopped after claiming its directory, before its first event) is no error: the
  // run has done nothing that could be done twice, so it starts from the beginning, and
  // nothing_recorded() says so.
  static Result<Journal> open(const std::filesystem::path& events_file, bool resume);

  // An outside answer of `type` keyed by `key` (e.g. a hash of the request): the logged one while
  // replaying, nullopt once the log is exhausted (make the call, then `record` it).
  Result<std::optional<nlohmann::json>> recall(const std::string& type, const std::string& key);

  // Records an event (an outside answer with its "type" and "key", or a decision). While replaying,
  // the logged event at the cursor must have the same type and key; it is consumed, not rewritten.
  Status record(nlohmann::json event);

  // The `field` of the event `recall` returned last, which must hold a value of `kind`; otherwise a
  // one-line error naming the event's line in the log. A log edited by hand or damaged on disk must
  // stop the resume with that line, not with an exception out of the JSON library.
  Result<nlohmann::json> payload(const std::string& field, nlohmann::json::value_t kind) const;
  // The same one-line error for a payload that is there but does not read back (`why`).
  Error malformed(const std::string& why) const;

  bool replaying() const { return cursor_ < logged_.size(); }
  size_t replayed() const { return replayed_; }
  bool dropped_torn_tail() const { return dropped_torn_tail_; }
  // A resume of a log that held no event, not even a torn one.
  bool nothing_recorded() const { return nothing_recorded_; }
  const std::filesystem::path& path() const { return log_.path(); }

 private:
  Journal(EventLog log, LoadedLog loaded, bool nothing_recorded)
      : log_(std::move(log)), logged_(std::move(loaded.events)), lines_(std::move(loaded.lines)),
        dropped_torn_tail_(loaded.dropped_torn_tail), nothing_recorded_(nothing_recorded) {}
  Error divergence(const nlohmann::json& expected) const;

  EventLog log_;
  std::vector<nlohmann::json> logged_;
  std::vector<int> lines_;  // each logged event's line in the file
  size_t cursor_ = 0;
  size_t replayed_ = 0;
  bool dropped_torn_tail_ = false;
  bool nothing_recorded_ = false;
};

}  // namespace cutegen
