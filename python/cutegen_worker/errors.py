"""Error kinds of the protocol. A handler raises one of these; the loop turns it into the envelope.

The kinds are declared once in cutegen (src/run/worker_errors.h, WorkerErrorKind); KINDS is this side's
copy, and python/tests/test_error_kinds.py fails when the two differ or when a module here spells a kind
as a string of its own.

`problem`: the user's file is at fault and the message says what to fix.
`request`: cutegen sent a bad request (a bug on our side).
`busy`: the machine was too busy to measure on (BusyError); no fault of the kernel's or the file's.
Anything else that escapes a handler is answered as `internal`.
"""

PROBLEM, REQUEST, BUSY, INTERNAL = "problem", "request", "busy", "internal"
KINDS = (PROBLEM, REQUEST, BUSY, INTERNAL)


class WorkerError(Exception):
    kind = INTERNAL


class ProblemError(WorkerError):
    kind = PROBLEM


class RequestError(WorkerError):
    kind = REQUEST


class BusyError(WorkerError):
    """The machine's load, not the kernel's or the file's: cutegen measures again later."""
    kind = BUSY
