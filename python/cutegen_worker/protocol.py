"""The JSON-lines loop: one request per line on stdin, exactly one response per line on stdout.

stdout carries protocol only. At start the worker keeps a private duplicate of file descriptor 1
for responses and points descriptor 1 (and sys.stdout) at stderr, so nothing else can reach the
stream: not a print() in a problem file, not a C++ extension writing to fd 1.

JSON has no NaN or Infinity; non-finite floats in results are sent as the strings "NaN",
"Infinity" and "-Infinity" (std::stod reads them).
"""
import json
import math
import os
import sys
import traceback

from .errors import INTERNAL, KINDS, REQUEST, RequestError, WorkerError


def protect_stdout():
    """Returns a text stream on the original stdout; fd 1 and sys.stdout now go to stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "w", encoding="utf-8", newline="\n")


def jsonable(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def error_response(request_id, kind: str, message: str) -> dict:
    assert kind in KINDS, kind  # cutegen refuses a kind it does not know (src/run/worker_errors.h)
    return {"id": request_id, "ok": False, "error": message, "kind": kind}


class Dispatcher:
    """Maps op names to handlers and turns every outcome into a response object."""

    def __init__(self, session):
        self.session = session
        self.stopped = False
        self.handlers = {
            "load": session.op_load,
            "evaluate_candidate": session.op_evaluate_candidate,
            "screen_candidates": session.op_screen_candidates,
            "prepare_profile": session.op_prepare_profile,
            "prepare_baselines": session.op_prepare_baselines,
            "time_baselines": session.op_time_baselines,
            "free_buffers": session.op_free_buffers,
            "calibrate": session.op_calibrate,
            "trace": session.op_trace,
            "describe": session.op_describe,
            "prompt_facts": session.op_prompt_facts,
            "release_gpu": session.op_release_gpu,
            "shutdown": self._shutdown,
        }

    def _shutdown(self, request: dict) -> dict:
        self.stopped = True
        return {}

    def handle_line(self, line: str) -> dict:
        try:
            request = json.loads(line)
        except ValueError as exc:
            return error_response(None, REQUEST, f"request is not valid JSON: {exc}")
        if not isinstance(request, dict):
            return error_response(None, REQUEST, "a request must be a JSON object")
        return self.handle(request)

    def handle(self, request: dict) -> dict:
        request_id = request.get("id")
        try:
            if not isinstance(request_id, int) or isinstance(request_id, bool):
                raise RequestError("request field 'id' must be an integer")
            op = request.get("op")
            handler = self.handlers.get(op) if isinstance(op, str) else None
            if handler is None:
                raise RequestError(f"unknown op {op!r}; expected one of {', '.join(sorted(self.handlers))}")
            return {"id": request_id, "ok": True, "result": jsonable(handler(request))}
        except WorkerError as exc:
            if getattr(exc, "fatal", False):  # this process can no longer be trusted to measure
                print(f"cutegen-worker: stopping: {exc}", file=sys.stderr)
                self.stopped = True
            return error_response(request_id, exc.kind, str(exc))
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            return error_response(request_id, INTERNAL, f"{type(exc).__name__}: {exc}")


def serve(dispatcher: Dispatcher, stdin, out) -> int:
    while True:
        line = stdin.readline()
        if not line:
            return 0  # EOF: cutegen went away
        if not line.strip():
            continue
        out.write(encode(dispatcher.handle_line(line)) + "\n")
        out.flush()
        if dispatcher.stopped:
            return 0


def encode(response: dict) -> str:
    try:
        return json.dumps(response, allow_nan=False)
    except (TypeError, ValueError) as exc:  # a handler returned something JSON cannot carry: our bug
        return json.dumps(error_response(response.get("id"), INTERNAL, f"unencodable result: {exc}"))


def main(install=None, announce: str = "") -> int:
    """The worker's life. `install`, given the Session before the first request, is the hook point the
    tests' own entry point uses (python/tests/fake_runner_worker.py); `python -m cutegen_worker` passes
    none, and `announce` says on stderr what was installed."""
    out = protect_stdout()
    from .session import Session  # torch is imported after stdout is safe: it may print at import

    from .confinement import network_policy
    try:
        deny_network = network_policy() == "deny"
    except WorkerError as exc:
        print(f"cutegen-worker: {exc}", file=sys.stderr)
        return 2
    session = Session(deny_network=deny_network)
    if install is not None:
        install(session)
        print(f"cutegen-worker: {announce or 'a test hook is installed'}", file=sys.stderr)
    return serve(Dispatcher(session), sys.stdin, out)
