#pragma once
// The kinds of error the reference worker answers with (docs/worker-protocol.md, "kind"), declared once:
// the worker's copy (python/cutegen_worker/errors.py, KINDS) is tied to this list by
// python/tests/test_error_kinds.py, so a kind added on one side only fails a test, not a run.
#include <optional>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cutegen {

enum class WorkerErrorKind {
  problem,   // the user's problem file is at fault; the message says what to fix
  request,   // cutegen sent a bad request (a bug on our side, or a session too big for the GPU)
  busy,      // the machine was too busy to measure on: no fault of the kernel's or the file's
  internal,  // anything else the worker did not expect; the message carries the exception
};

std::string_view to_string(WorkerErrorKind k);
const std::vector<WorkerErrorKind>& all_worker_error_kinds();
std::optional<WorkerErrorKind> parse_worker_error_kind(std::string_view word);

// What a caller of the worker tells apart (common/result.h): a `problem` error is that problem's verdict
// in cutegen bench, a `busy` one makes the judge measure again; the others are plain errors.
ErrorKind error_kind_for(WorkerErrorKind k);

}  // namespace cutegen
