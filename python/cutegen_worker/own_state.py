"""The worker's own scheduling state, compared before and after every evaluation (docs/judge.md §6).

The runner's sandbox keeps a candidate from naming any other process (src/sandbox/process_filter.cpp).
This is the second line, in the trusted process itself: the worker times every kernel, so a candidate
that pinned it to one CPU, idle-scheduled it, lowered its priority or set a CPU limit that kills it
would skew or cut short every later measurement of the run without being the one measured. If any of
that changed while a candidate ran, the worker answers with the difference and stops.

What is read is the process's rlimits and, of its main thread (the one that times: its TID is the pid,
which is what another process names), nice value, CPU affinity, scheduler policy and priority, I/O
priority, timer slack, OOM score adjustment and autogroup.
"""
import ctypes
import os
import platform
import resource

from .errors import WorkerError

IOPRIO_WHO_PROCESS = 1
_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}  # not in Python's os module


class StateChanged(WorkerError):
    """Another process changed the worker's scheduling state: nothing it measures from now on can be
    trusted, so the protocol loop stops the worker once it has answered (protocol.py)."""
    fatal = True  # an `internal` error (WorkerError's kind) after which the worker stops


def _ioprio(pid: int):
    number = _IOPRIO_GET.get(platform.machine())
    if number is None:
        return "not read on this architecture"
    libc = ctypes.CDLL(None, use_errno=True)
    value = libc.syscall(ctypes.c_long(number), ctypes.c_int(IOPRIO_WHO_PROCESS), ctypes.c_int(pid))
    return value if value >= 0 else f"unreadable ({os.strerror(ctypes.get_errno())})"


def _proc(name: str):
    try:
        with open(f"/proc/self/{name}", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:  # a kernel without autogroups or timer slack files: absent both times
        return None


def snapshot() -> dict:
    """The state that must not change under an evaluation, as {what: value}."""
    pid = os.getpid()
    state = {}
    for name in sorted(n for n in dir(resource) if n.startswith("RLIMIT_")):
        state[f"{name} (soft, hard)"] = resource.getrlimit(getattr(resource, name))
    state["nice value"] = os.getpriority(os.PRIO_PROCESS, pid)
    state["CPU affinity"] = sorted(os.sched_getaffinity(pid))
    state["scheduler policy"] = os.sched_getscheduler(pid)
    state["scheduler priority"] = os.sched_getparam(pid).sched_priority
    state["I/O priority"] = _ioprio(pid)
    state["timer slack (ns)"] = _proc("timerslack_ns")
    state["OOM score adjustment"] = _proc("oom_score_adj")
    state["autogroup"] = _proc("autogroup")
    return state


def differences(before: dict, after: dict) -> list:
    return [f"{what}: {before.get(what)!r} -> {after.get(what)!r}"
            for what in sorted(set(before) | set(after)) if before.get(what) != after.get(what)]


def require_unchanged(before: dict, during: str):
    changed = differences(before, snapshot())
    if changed:
        raise StateChanged(
            f"the worker's own scheduling state changed {during} ({'; '.join(changed)}): another process -- the "
            "candidate's runner, most likely -- reached the worker, and every later measurement would be skewed. "
            "The worker stops; start the run again (and report it: the runner's sandbox should have refused this).")
