"""Whether another program works on the judge's GPU: a shared GPU is neither a verdict nor a number.

The checks that tell work after a call from work in it (the probe after each call, the worker's clock
against the given stream's events) read another process's kernels on the same GPU as the candidate's: on
the H200 (2026-12-05, benchmarks/results.md) honest kernels timed beside another process's evaluations were
judged `hidden_work` (the library convolution, softmax, reduction, GEMM and LayerNorm), and passed alone.

So the worker asks the driver (gpu_probe.py) at the two moments no code of the candidate can have work on
the GPU: after calibration, before the kernel is loaded (the runner runs only the harness's code), and once
the runner has exited after the timed calls (a session whose verdict rests on times: pass or hidden_work).
The baselines are timed between the same two checks. Each check:

* lists the processes with a context on the GPU. A process that is not the judge's (the worker, its
  runners, the worker's descendants) is named, but holding a context refuses nothing: an idle sibling
  worker of `cutegen bench`, or a notebook, slows no kernel;
* after the timed calls, asks how busy each process kept the GPU while they ran (NVML's per-process
  samples): a process not the judge's at BUSY_PERCENT or more of the SMs in a sample is another user;
* samples the GPU's utilisation over a window in which the judge launches nothing: NVML's timestamped
  samples, of which only those whose whole period lies inside the window count (a sample period is up to
  a second long, so a reading taken just after the judge's own work is that work). BUSY_PERCENT or more
  is another user. This is the backstop where processes cannot be seen: NVML lists the processes of other
  PID namespaces (containers) under numbers this worker cannot match, or not at all.

Another user is a GpuBusy (the `busy` kind: cutegen measures again after a pause, then reports the
machine busy), never a verdict. What could not be checked is recorded (`gpu_share` in the record: `status`
`partial` or `unavailable` with a `note`), and `eval` warns; it refuses nothing by itself.
"""
import os
import statistics
import time

import torch

from .errors import BusyError, RequestError
from . import gpu_probe
from .gpu_probe import ProbeError

BUSY_PERCENT = 10  # of a sample period: another program's kernels ran a tenth of the time the judge was idle
MAX_PERIOD_US = 200_000  # longest sample period waited out (NVML's range: 1/6 s to 1 s, by product)
PERIOD_MARGIN = 1.1  # a sample counts when 1.1 of its period lies after the window opened (timestamp jitter)
LAG_US = 50_000  # how late a sample may be published after its timestamp
POLL_S = 0.02
CLOCK_SLACK_US = 10_000_000  # NVML's sample timestamps are the wall clock's microseconds; farther: another clock
MOST_NAMED = 3

SWITCH = "CUTEGEN_GPU_SHARE_CHECK"
SWITCHES = ("on", "off")


class GpuBusy(BusyError):
    """Another program worked on the judge's GPU: the answer is no number, with what was found."""


def now_us() -> int:
    """The clock NVML stamps its samples with (a CPU time in microseconds: the wall clock)."""
    return time.time_ns() // 1000


def process_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "?"
    except OSError:
        return "not visible here"


def parent_pid(pid: int):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])  # the field after the state
    except (OSError, IndexError, ValueError):
        return None


def descends_from(pid: int, ancestor: int, parent=parent_pid) -> bool:
    """Whether `pid` is a descendant of `ancestor` (a compile worker torch started, say)."""
    seen = set()
    while pid and pid not in seen:
        seen.add(pid)
        pid = parent(pid)
        if pid == ancestor:
            return True
    return False


def sample_period_us(samples: list):
    """The median gap between consecutive samples' timestamps: how long each one covers."""
    stamps = sorted({ts for ts, _ in samples})
    gaps = [b - a for a, b in zip(stamps, stamps[1:]) if b > a]
    return statistics.median(gaps) if gaps else None


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB"


def _unseen(view: str) -> str:
    """Why nobody is named beside an idle GPU's utilisation."""
    if view == "none":
        return "the driver lists no process at all here, as in a container: another container's work?"
    if view == "foreign":
        return "the driver's process numbers are another PID namespace's, as in a container"
    return "no process but the judge's is listed"


def busy_message(moment: str, named: list, loop_usage: dict, idle_percent, view: str) -> str:
    """One line: what was found, when, what to do. `named`: [(pid, bytes or None, name)] of processes not
    the judge's; `loop_usage`: {pid: highest SM percent during the timed calls}."""
    items = []
    for pid, used, name in named[:MOST_NAMED]:
        said = [f"holds {_gib(used)}"] if used else []
        if pid in loop_usage:
            said.append(f"used up to {loop_usage[pid]}% of the GPU during the timed calls")
        items.append(f"process {pid} ({name}) " + (" and ".join(said) if said else "has a context on it"))
    if len(named) > MOST_NAMED:
        items.append(f"{len(named) - MOST_NAMED} more processes")
    if idle_percent is not None and idle_percent >= BUSY_PERCENT:
        idle = f"the GPU was {idle_percent:.0f}% busy while the judge was idle"
        items.append(idle if named else f"{idle} ({_unseen(view)})")
    found = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    return (f"the GPU was too busy to time on: {found} ({moment}). Time on a GPU no other program uses, or once "
            "the other work is done")


class ShareCheck:
    """The checks of one session (or one baseline's timing) on one GPU, and their record."""

    def __init__(self, probe, unavailable: str = None, off: bool = False, own_pid: int = None,
                 clock=now_us, sleep=time.sleep, name_of=process_name, descends=descends_from, idle_window: bool = True):
        self.probe, self.unavailable, self.off = probe, unavailable, off
        # False for a screening (for_device): the processes are still listed and their shares read, but no idle
        # window is waited out -- it costs a sample period or two (0.3-0.4 s on an H100) per check.
        self.idle_window = idle_window
        self.own_pid = own_pid if own_pid is not None else os.getpid()
        self.clock, self.sleep, self.name_of, self.descends = clock, sleep, name_of, descends
        self.checks, self.notes = [], []

    def record(self) -> dict:
        """`status`: checked (every check sampled the idle GPU; `note` may still name a part that could not
        run), partial (some check could not sample it: `note` says why), unavailable (no route to the driver: `note` says why), off (CUTEGEN_GPU_SHARE_CHECK)."""
        if self.off:
            status, note = "off", f"{SWITCH}=off"
        elif self.probe is None:
            status, note = "unavailable", self.unavailable or "no way to ask the driver"
        else:
            # The idle GPU's utilisation is the backstop that sees every user: without it, only some are seen.
            sampled = bool(self.checks) and all(c["idle_busy_percent"] is not None for c in self.checks)
            status, note = ("checked" if sampled else "partial"), "; ".join(self.notes)
        return {"status": status, "source": getattr(self.probe, "source", None), "note": note, "checks": self.checks}

    def _note(self, text: str):
        if text not in self.notes:
            self.notes.append(text)

    def check(self, moment: str, judge_pids, since_us: int = None) -> None:
        """Raises GpuBusy when another program works on the GPU. `judge_pids`: the runners of the session
        (the worker is always the judge's); `since_us`: when the timed calls began (now_us), to ask how busy
        each process kept the GPU since."""
        if self.probe is None:
            return
        ours = set(judge_pids) | {self.own_pid}
        try:
            listed = self.probe.processes()
        except ProbeError as exc:
            listed = None
            self._note(f"processes not listed: {exc}")
        view = self._view(listed)
        others = [(pid, used) for pid, used in listed or [] if view == "same" and self._foreign(pid, ours)]
        loop = self._loop_usage(ours, since_us) if since_us is not None and view == "same" else {}
        loop = {pid: pct for pid, pct in loop.items() if pct > 0}
        # The idle window costs a sample period or two: not spent once the timed calls already showed a user.
        idle = None
        if not self.idle_window:
            self._note("a screening waits out no idle window: it only ranks candidates, and the one chosen is judged "
                       "in full with it")
        elif not any(p >= BUSY_PERCENT for p in loop.values()):
            idle = self._idle_percent()
        used = dict(others)
        named_pids = list(used) + [pid for pid in loop if pid not in used]
        named = [(pid, used.get(pid), self.name_of(pid)) for pid in
                 sorted(named_pids, key=lambda p: (-loop.get(p, 0), -(used.get(p) or 0)))]
        self.checks.append({"moment": moment, "pid_view": view, "others": [
            {"pid": pid, "bytes": b, "name": n, "timed_calls_busy_percent": loop.get(pid)} for pid, b, n in named],
            "idle_busy_percent": idle})
        if (idle is not None and idle >= BUSY_PERCENT) or any(p >= BUSY_PERCENT for p in loop.values()):
            raise GpuBusy(busy_message(moment, named, {p: v for p, v in loop.items() if v >= BUSY_PERCENT}, idle, view))

    def _view(self, listed):
        """same: NVML's process numbers are this worker's (it holds a context, so it is listed); foreign: they
        are another PID namespace's (a container's), and nobody can be named by them; none: nothing listed."""
        if listed is None:
            return None
        if self.own_pid in {pid for pid, _ in listed}:
            return "same"
        self._note("the driver's process list does not show this worker (PID namespaces): other processes "
                   "are judged by the GPU's utilisation alone")
        return "foreign" if listed else "none"

    def _foreign(self, pid: int, ours: set) -> bool:
        return pid not in ours and not self.descends(pid, self.own_pid)

    def _loop_usage(self, ours: set, since_us: int) -> dict:
        try:
            samples = self.probe.process_utilization(since_us)
        except ProbeError as exc:
            samples = None
            self._note(f"per-process utilisation not read: {exc}")
        if samples is None:
            self._note(f"{self.probe.source} gives no per-process utilisation: work during the timed calls that "
                       "stopped before they ended is not seen")
            return {}
        usage = {}
        for pid, ts, sm in samples:
            if ts > since_us and self._foreign(pid, ours):
                usage[pid] = max(usage.get(pid, 0), sm)
        return usage

    def _idle_percent(self):
        """The GPU's mean utilisation over the samples that lie wholly in a window in which the judge launches
        nothing; None (with a note) when none can be had."""
        start = self.clock()
        try:
            history = self.probe.utilization_samples(0)
        except ProbeError as exc:
            self._note(f"utilisation not sampled: {exc}")
            return None
        if history is None:
            self._note(f"{self.probe.source} gives no timestamped utilisation samples: only processes were checked, "
                       "and a process is not taken for a user by its context alone")
            return None
        period = sample_period_us(history)
        if period is None:
            self._note("too few utilisation samples to learn their period")
            return None
        if period > MAX_PERIOD_US:
            self._note(f"the GPU's utilisation sample period is {period / 1000:.0f} ms, longer than the judge waits idle")
            return None
        if abs(start - max(ts for ts, _ in history)) > CLOCK_SLACK_US:
            self._note("the utilisation samples are not stamped with this machine's wall clock")
            return None
        deadline = start + 2 * PERIOD_MARGIN * period + LAG_US
        while True:
            self.sleep(POLL_S)
            try:
                recent = self.probe.utilization_samples(start)
            except ProbeError as exc:
                self._note(f"utilisation not sampled: {exc}")
                return None
            inside = [v for ts, v in recent or [] if ts - PERIOD_MARGIN * period >= start]
            if inside:
                return statistics.mean(inside)
            if self.clock() >= deadline:
                self._note("no utilisation sample fell wholly inside the judge's idle window")
                return None


def switch() -> str:
    value = os.environ.get(SWITCH, SWITCHES[0])
    if value not in SWITCHES:
        raise RequestError(f"{SWITCH}={value!r}: expected one of {', '.join(SWITCHES)}")
    return value


def for_device(device, idle_window: bool = True):
    """The checks for a session on torch `device`; None on the CPU (tests), where there is no GPU to share.
    `idle_window` False (a screening): no idle window is waited out (ShareCheck)."""
    if device.type != "cuda":
        return None
    if switch() == "off":
        return ShareCheck(None, off=True)
    probe, why = gpu_probe.open_probe(device.index if device.index is not None else torch.cuda.current_device())
    return ShareCheck(probe, unavailable=why, idle_window=idle_window)
