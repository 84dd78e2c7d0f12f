"""Error kinds of the protocol. A handler raises one of these; the loop turns it into the envelope.

`problem`: the user's file is at fault and the message says what to fix.
`request`: cutegen sent a bad request (a bug on our side).
Anything else that escapes a handler is answered as `internal`.
"""


class WorkerError(Exception):
    kind = "internal"


class ProblemError(WorkerError):
    kind = "problem"


class RequestError(WorkerError):
    kind = "request"
