#include "run/worker_errors.h"

namespace cutegen {

std::string_view to_string(WorkerErrorKind k) {
  switch (k) {
    case WorkerErrorKind::problem: return "problem";
    case WorkerErrorKind::request: return "request";
    case WorkerErrorKind::busy: return "busy";
    case WorkerErrorKind::internal: return "internal";
  }
  return "internal";
}

const std::vector<WorkerErrorKind>& all_worker_error_kinds() {
  static const std::vector<WorkerErrorKind> kinds = {WorkerErrorKind::problem, WorkerErrorKind::request,
                                                     WorkerErrorKind::busy, WorkerErrorKind::internal};
  return kinds;
}

std::optional<WorkerErrorKind> parse_worker_error_kind(std::string_view word) {
  for (WorkerErrorKind k : all_worker_error_kinds())
    if (to_string(k) == word) return k;
  return std::nullopt;
}

ErrorKind error_kind_for(WorkerErrorKind k) {
  switch (k) {
    case WorkerErrorKind::problem: return ErrorKind::problem_file;
    case WorkerErrorKind::busy: return ErrorKind::machine_busy;
    case WorkerErrorKind::request:
    case WorkerErrorKind::internal: return ErrorKind::general;
  }
  return ErrorKind::general;
}

}  // namespace cutegen
