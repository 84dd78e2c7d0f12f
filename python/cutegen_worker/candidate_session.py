"""`evaluate_candidate`: one candidate from start to end, with the worker as the trusted supervisor.

docs/judge.md is the design; in short:
1. a slot of shared buffers (staging.py) and a runner process (runner_link.py);
2. calibration while the runner has NOT loaded the candidate yet (its code is still ours): the round
   trip of a command, and the latency of the worker's own probe and gather with the GPU idle;
3. `load`: the runner sandboxes itself and dlopens the candidate; a kernel with a workspace
   (contract v2) reports the size it needs, and the worker, having checked it against the cap,
   allocates it and starts a second runner that maps it with the rest of the slot;
4. correctness trials: each stages a fresh set, runs into both output sets, is checked in full;
5. timed calls: each stages a fresh set (half `problem`, half `signed` inputs, random parameters),
   is timed on this process's clock, has fresh secret positions of its outputs gathered right after
   it returns and compared with the reference there, and its outputs copied into a private buffer --
   the same work after every call, so nothing tells the candidate which calls are checked in full:
   two, chosen before the loop, whose copies are kept and compared element by element after it;
6. the runner is told to quit and waited for.
The first failure ends the session; its verdict word is one of VERDICTS.
"""
import contextlib
import math
import os
import secrets as secrets_mod
import statistics
import time
from dataclasses import dataclass, field

import torch

from . import (audit, compare, cpu_time, cpu_wait, fused_compare, gpu_share, inputs, memory, memtrace,
               params as params_mod, runner_link, shape_configs)
from .errors import ProblemError, RequestError
from .shared_buffers import SharedArena
from .staging import CallSpec, Slot

VERDICTS = ("pass", "load_failed", "kernel_error", "cuda_error", "crash", "timeout", "printed_output", "mismatch",
            "unwritten", "nondeterministic", "input_mutated", "hidden_work", "result_reuse", "forbidden_call",
            "tampering", "host_compute", "shape_specific")
CALIBRATION_ROUNDS = 16
# The verdicts that rest on the session's times, which another program's work on the GPU distorts: after
# these the GPU is checked for other users again (gpu_share.py) before the verdict stands.
TIMED_VERDICTS = ("pass", "hidden_work")
# The input kinds a timed call draws (_timed_calls); calibration rounds stage them in turn, so the limits a
# call's probes are held to come from the same staging work as the call's own: on the H200 the probe before
# a call read 0.05 ms more after a signed set was staged than after a problem set, and calibrated on problem
# sets alone that difference was charged as overrun to every signed call.
TIMED_KINDS = ("problem", "signed")


def _experiment(variable: str, choices: tuple) -> str:
    """A timing experiment's switch from the environment: the first choice is the default; anything
    else than the choices is a request error naming them."""
    value = os.environ.get(variable, choices[0])
    if value not in choices:
        raise RequestError(f"{variable}={value!r}: expected one of {', '.join(choices)}")
    return value


# What stands in for a call while calibrating (the runner's RunnerCommand::Sweep): "own" writes the
# runner's 128 MiB buffer; "footprint" reads every input and parameter byte and writes output set 0,
# a call's whole footprint (TLB state included). On the H200 (2026-12-01) the two did not differ;
# kept as a switch for other GPUs (docs/judge.md, "Known limits").
CALIBRATION_SWEEPS = ("own", "footprint")


def calibration_sweep() -> str:
    return _experiment("CUTEGEN_CALIBRATION_SWEEP", CALIBRATION_SWEEPS)


# Which latency after a call is charged as overrun (GPU work of the candidate still running once it
# replied): "probe" (the default), a tiny kernel of the worker's right after the reply, the same probe
# as before the call (calibrated p90 0.02-0.04 ms), with the gather straight after it, timed and
# recorded but not charged; or "gather", the gather of the secret positions itself, whose own latency
# after a real call exceeds its calibrated p90 by 0.06-0.17 ms on an H200 for honest kernels. Either way
# unfinished work is seen: a context that must wait for the candidate's is charged the wait, one
# time-sliced in beside it reads the poison. The GPU A/B of 2026-12-01 (benchmarks/results.md):
# LayerNorm 40 at 0.389/0.398 ms under "probe" against 0.598/0.520 under "gather" (0.350 by events),
# and the overrun attacks (side_stream, side_stream_tiny's 40 us, the skips) judged alike.
OVERRUN_CHECKS = ("probe", "gather")

# Under "probe", the gather's own excess beyond this is charged too. A time-sliced GPU can let the probe
# through after one slice while the candidate's leftover work still runs, and that work may then finish
# while the gather waits behind it (finished outputs, no poison): the probe saw one slice of it, the
# gather the rest. Honest gathers after a real call exceeded their calibrated p90 by a median 0.004-0.17
# ms on the H200 (2026-12-01), so above 0.25 ms the wait is the candidate's; what a cheat can still hide
# after its reply is bounded by this, per call.
GATHER_ALLOWANCE_NS = 250_000


# How the runner waits for the GPU at the end of a call (src/run/runner_job.h, GpuWait): "hybrid" (the default),
# a spin of up to 0.1 ms, then asleep in the driver on blocking-sync events, so that a few-microsecond call
# pays no wake-up and the runner's CPU time inside a call is still its host code's (host computing is judged
# by it, cpu_time.py; the spin is charged once per call and kept out of the share, _spin_ns); "block", asleep
# from the start, the default before 2026-12-06 (on an H100 it charged relu_small's 6.5 us kernel 0.163 ms
# against hybrid's 0.061, benchmarks/results.md); "poll" with short sleeps (src/run/polled_wait.h), whose
# queries cost half the time waited on the H200 (the check then turns itself off), kept for the A/B; "spin",
# the wait before all of them, kept for the A/B of the reply latency -- host computing is then not judged, and
# `eval` says so.
RUNNER_WAITS = ("hybrid", "block", "poll", "spin")


def runner_wait() -> str:
    return _experiment("CUTEGEN_RUNNER_WAIT", RUNNER_WAITS)


def _spin_ns() -> int:
    """The CPU every call's wait spends before it sleeps: the hybrid wait's spin, else none (cpu_time.py)."""
    return cpu_time.HYBRID_SPIN_NS if runner_wait() == "hybrid" else 0


def overrun_check() -> str:
    return _experiment("CUTEGEN_OVERRUN_CHECK", OVERRUN_CHECKS)


def charge_after_call(check: str, post_excess_ns: int, gather_excess_ns: int) -> int:
    """The overrun charged after a call (before it, the probe's excess is charged either way)."""
    if check == "gather":
        return gather_excess_ns
    # The two waits come one after the other (the gather starts once the probe is back): both are the
    # leftover's, so they add.
    return post_excess_ns + max(0, gather_excess_ns - GATHER_ALLOWANCE_NS)


HIDDEN_WORK_SLACK_MS = 0.35
FULL_AUDITS = audit.FULL_AUDITS
# A staging budget (Plan.timed_budget_s) never cuts the timed calls below this many: enough for a median
# and an IQR, and for every per-call check (a tenth of the calls host-busy or overrun) to have a count.
MIN_BUDGETED_RUNS = 30
# ... and a screening's not below this many: it only ranks, and the candidate it chooses is judged in full.
MIN_SCREENING_RUNS = 10

# Trial kinds no timed call uses (TIMED_KINDS), whose checks the screen of the timed calls does not rest on: with
# the loop's bar (Plan.keep_bar_ms) they run after the timed calls, and only for a kernel faster than the bar.
# A slower one is rolled back whatever they would show; at KernelBench's sizes each is a full check of ~0.2 s.
DEFERRABLE_KINDS = ("scaled",)

# A timed call's seed: drawn from the OS per call, as wide as torch.manual_seed takes without wrapping.
CALL_SEED_BITS = 63
CUTEGEN_ERROR_NAMES = {1000: "CUTEGEN_ERROR_BAD_ARGUMENTS", 1001: "CUTEGEN_ERROR_UNSUPPORTED"}


class Stop(Exception):
    """Ends the session with a verdict. `refused`: the kernel declined the shapes it was given, as the contract
    lets it (CUTEGEN_ERROR_UNSUPPORTED or _BAD_ARGUMENTS, a workspace size of 0) -- a failure at the problem's
    own shapes, no wrong answer at another (generalize.py)."""

    def __init__(self, verdict: str, reason: str, failed_check: int = None, refused: bool = False):
        assert verdict in VERDICTS, verdict
        super().__init__(reason)
        self.verdict, self.reason, self.failed_check, self.refused = verdict, reason, failed_check, refused


@dataclass
class Plan:
    runner: list
    library: str
    trials: list          # CallSpec, in the order to run them
    warmup: int
    runs: int
    precision: str
    call_timeout_s: float
    work_dir: str
    generalize: int = 0   # generalization trials after a pass (generalize.py); 0: none
    # The loop's bar (docs/worker-protocol.md), the time a kernel must beat to be kept: what only a kept kernel
    # needs runs only for one below it -- the generalization trials (generalize.py), and at the problem's own
    # shape DEFERRABLE_KINDS' trials and the full audits, after the timed calls. A slower kernel is rolled back
    # whatever they would show. None: every check, in the usual order.
    keep_bar_ms: float = None
    # The timed calls' staging budget: with it, `runs` is a most; the session runs as many of them as staging
    # fresh sets for fits in this many seconds, at the staging time calibration measured (at least
    # MIN_BUDGETED_RUNS). At KernelBench sizes a timed call's staging alone is 10-30 ms, several times the
    # kernel's own time, and a multi-millisecond call's median needs no hundred samples. None: `runs` exactly.
    timed_budget_s: float = None
    # The judge's reading of the library's exports (docs/worker-protocol.md): it defines the workspace pair, so its
    # first runner only asks the size and is not calibrated (CandidateSession._start). A hint, never trusted for a
    # check: a kernel that then asks for none gets a calibrated runner of its own.
    expects_workspace: bool = False
    # The size this library asked for at the problem's shapes in an earlier session of the same judge (a screening
    # group's, before the chosen candidate is judged in full): its first runner then starts with that workspace
    # mapped and calibrated, and the size it asks at load must be the same (CandidateSession._start). None: asked.
    workspace_bytes: int = None
    # The size another library of this problem asked for in an earlier session (the loop's last candidate: a step
    # rarely changes it). Only with `expects_workspace`: the first runner starts with that workspace mapped and
    # calibrated, and when the kernel asks for exactly it, no second runner is needed; any other answer makes that
    # runner the one that asked, as without a guess. None: no guess.
    workspace_guess_bytes: int = None
    # A screening (cutegen tune, the loop's candidates): it ranks, and what it chooses is judged again in full,
    # so the checks for other users of the GPU wait out no idle window (gpu_share.ShareCheck).
    screening: bool = False

    @staticmethod
    def parse(req: dict) -> "Plan":
        def need(name, kind):
            value = req.get(name)
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise RequestError(f"evaluate_candidate: field {name!r} must be {kind.__name__}")
            return value
        trials = []
        for spec in need("trials", list):
            if not isinstance(spec, dict) or not isinstance(spec.get("seed"), int):
                raise RequestError(f"evaluate_candidate: a trial must be an object with an integer seed, got {spec!r}")
            kind, pkind = spec.get("kind", "problem"), spec.get("params", params_mod.RANDOM)
            if kind not in inputs.TRIAL_KINDS or pkind not in params_mod.KINDS:
                raise RequestError(f"evaluate_candidate: unknown trial kind {kind!r} or params {pkind!r}")
            if kind == "scaled" and not isinstance(spec.get("scale"), (int, float)):
                raise RequestError("evaluate_candidate: a scaled trial needs a scale")
            trials.append(CallSpec(seed=spec["seed"], kind=kind, scale=float(spec.get("scale", 1.0)), params=pkind))
        runner = need("runner", list)
        if not runner or not all(isinstance(a, str) for a in runner):
            raise RequestError("evaluate_candidate: runner must be a non-empty argv list")
        plan = Plan(runner=runner, library=need("library", str), trials=trials, warmup=need("warmup", int),
                    runs=need("runs", int), precision=req.get("precision", compare.DEFAULT_PRECISION),
                    call_timeout_s=need("call_timeout_s", float), work_dir=need("work_dir", str))
        if plan.warmup < 0 or plan.runs < 0 or plan.call_timeout_s <= 0:
            raise RequestError("evaluate_candidate: warmup and runs must be >= 0 and call_timeout_s > 0")
        generalize = req.get("generalize", 0)
        if type(generalize) is not int or not 0 <= generalize <= shape_configs.MAX_TRIALS:
            raise RequestError(f"evaluate_candidate: generalize must be an integer from 0 to {shape_configs.MAX_TRIALS}")
        plan.generalize = generalize
        plan.keep_bar_ms = _optional_positive(req, "keep_bar_ms", "milliseconds")
        plan.timed_budget_s = _optional_positive(req, "timed_budget_s", "seconds")
        plan.screening = _optional_flag(req, "screening")
        plan.expects_workspace = _optional_flag(req, "workspace")
        known = req.get("workspace_bytes")
        if known is not None and (type(known) is not int or known <= 0):
            raise RequestError("evaluate_candidate: workspace_bytes must be a positive whole number of bytes")
        plan.workspace_bytes = known
        guess = req.get("workspace_guess_bytes")
        if guess is not None:
            if type(guess) is not int or guess <= 0:
                raise RequestError("evaluate_candidate: workspace_guess_bytes must be a positive whole number of bytes")
            if known is not None or not plan.expects_workspace:
                raise RequestError("evaluate_candidate: workspace_guess_bytes goes with workspace: true and without "
                                   "workspace_bytes")
        plan.workspace_guess_bytes = guess
        return plan

    def fitted_runs(self, staging_ns: int) -> int:
        """The timed calls to run, given what one costs in staging (ns: calibration's median staging time, times
        the candidates of a screening group, who each have the set written again): `runs`, or fewer under the
        staging budget (never below MIN_BUDGETED_RUNS, MIN_SCREENING_RUNS for a screening, nor above `runs`)."""
        if self.timed_budget_s is None or staging_ns <= 0:
            return self.runs
        floor = MIN_SCREENING_RUNS if self.screening else MIN_BUDGETED_RUNS
        return min(self.runs, max(floor, int(self.timed_budget_s * 1e9 // staging_ns)))


def _optional_flag(req: dict, name: str) -> bool:
    """A request's optional boolean, false when absent."""
    value = req.get(name, False)
    if type(value) is not bool:
        raise RequestError(f"evaluate_candidate: {name} must be true or false")
    return value


def _optional_positive(req: dict, name: str, unit: str):
    """A request's optional positive finite number, as a float; None when absent."""
    value = req.get(name)
    if value is None:
        return None
    if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
        raise RequestError(f"evaluate_candidate: {name} must be a positive number of {unit}")
    return float(value)


@dataclass
class Record:
    """What the session answers (docs/worker-protocol.md, `evaluate_candidate`)."""
    verdict: str = "pass"
    reason: str = ""
    failed_check: int = None
    checks: list = field(default_factory=list)
    runner: dict = field(default_factory=dict)
    calibration: dict = field(default_factory=dict)
    audits: dict = field(default_factory=lambda: {"timed_calls": 0, "sampled": 0, "full": 0,
                                                  "positions": audit.POSITIONS})
    time: dict = None
    calls: list = field(default_factory=list)  # per timed call: kind, wall_ms, overrun_ms, event_ms
    workspace: dict = None  # {"bytes", "cap_bytes"} for a kernel with a workspace
    gpu_share: dict = None  # what the checks for other users of the GPU found or could not (gpu_share.py)
    refused: bool = False  # the session ended on the kernel declining its shapes (Stop.refused)
    # Where the session's wall time went (Phases), so a slow evaluation can be taken apart without a profiler.
    phase_seconds: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"verdict": self.verdict, "reason": self.reason, "failed_check": self.failed_check,
               "checks": self.checks, "runner": self.runner, "calibration": self.calibration, "audits": self.audits,
               "time": self.time, "calls": self.calls, "workspace": self.workspace}
        if self.refused:
            out["refused"] = True
        if self.gpu_share is not None:
            out["gpu_share"] = self.gpu_share
        if self.phase_seconds:
            out["phase_seconds"] = {k: round(v, 6) for k, v in self.phase_seconds.items()}
        return out


class Phases:
    """Seconds spent per named part of a session, accumulated: `with phases("trials"):` around a part, or
    `phases.add(name, ns)` for pieces timed inside a loop."""

    def __init__(self, into: dict):
        self.into = into

    def add(self, name: str, ns: int) -> None:
        self.into[name] = self.into.get(name, 0.0) + ns / 1e9

    @contextlib.contextmanager
    def __call__(self, name: str):
        t0 = time.perf_counter_ns()
        try:
            yield
        finally:
            self.add(name, time.perf_counter_ns() - t0)


def _ms(ns: float) -> float:
    return ns / 1e6


def _stats(values: list) -> dict:
    ordered = sorted(values)
    q1, q3 = _quantile(ordered, 0.25), _quantile(ordered, 0.75)
    return {"median_ms": statistics.median(ordered), "iqr_ms": q3 - q1, "min_ms": ordered[0], "max_ms": ordered[-1],
            "runs": len(ordered)}


def _quantile(ordered: list, q: float) -> float:
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass
class _NativeSample:
    """What a timed call's comparisons need of one of PyTorch's own outputs (_native_samples)."""
    values: torch.Tensor    # its values at the call's secret positions (host)
    expected: torch.Tensor  # for the screen: compare.expected_scale_and_norm's values there, else None
    scale: float            # ... and their scale,
    norm: float             # ... and their sum of squares over the whole output,
    total: int              # ... and the whole output's element count


class _Clock:
    """The worker's own GPU work around a call: the L2 flush, the probe and synchronisation."""

    def __init__(self, device: torch.device):
        self.device = device
        cuda = device.type == "cuda"
        self._flush = torch.empty(memory.FLUSH_BYTES if cuda else (1 << 20), dtype=torch.uint8, device=device)
        self._probe = torch.zeros(1, device=device)
        self._n = 0

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def flush(self):
        self._n += 1
        self._flush.fill_(self._n & 0xFF)

    def mark(self):
        """A timestamp taken on the worker's own stream. On a GPU it is a CUDA event, stamped when the GPU next
        runs the worker's work -- after any work of another context it has to wait for -- so two marks
        bracket a call on the GPU's clock, whatever the runner replied and when; on the CPU, the time now."""
        if self.device.type == "cuda":
            event = torch.cuda.Event(enable_timing=True)
            event.record(torch.cuda.current_stream(self.device))
            return event
        return time.perf_counter_ns()

    def span_ns(self, start, end) -> int:
        """Nanoseconds from one mark to a later one (both must have been reached: synchronise first)."""
        if isinstance(start, int):
            return end - start
        return int(start.elapsed_time(end) * 1e6)

    def probe_ns(self) -> int:
        """Latency of a trivial kernel of the worker's, launched and waited for: it rises when the
        GPU is still busy with another context's work."""
        return self.probe_marked()[0]

    def probe_marked(self, mark: str = None):
        """(probe_ns, a mark taken inside the probe's window): "start" once the probe has run (where a
        call's span begins), "end" just before it (where the span ends). Inside, because a mark waits for
        the GPU just as the probe does: taken before the probe, it would absorb in an untimed
        synchronisation the very wait for a candidate's leftover work that the probe is there to charge."""
        self.sync()
        if self.device.type != "cuda":
            # On the CPU (the tests' fake runner) there is no other work a probe could wait for; its first
            # operation after an idle spell only measures the machine (0.3-1.4 ms after 20-90 ms idle on a
            # virtual CI machine, 0.005 ms warm), which read as hidden work. The timed one runs warm.
            self._probe.add_(1)
        t0 = time.perf_counter_ns()
        taken = self.mark() if mark == "end" else None
        self._probe.add_(1)
        if mark == "start":
            taken = self.mark()
        self.sync()
        return time.perf_counter_ns() - t0, taken


@dataclass
class _TimedCalls:
    """The plan of a session's timed calls (CandidateSession._timed_begin) and what they gave so far."""
    runs: int
    warmup: int
    kinds: list  # the input kind of every call, the warm-up calls' first
    full: list   # the timed calls also checked in full (their index among the timed calls)
    kept: list = field(default_factory=list)  # (timed call, its spec, its poison, the spec before it, its copy)
    walls: dict = field(default_factory=lambda: {kind: [] for kind in TIMED_KINDS})
    events: list = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.warmup + self.runs

    def spec(self, i: int, sysrand) -> CallSpec:
        """Call `i`'s inputs: its kind from the plan, a seed drawn from the OS now."""
        return CallSpec(seed=sysrand.getrandbits(CALL_SEED_BITS), kind=self.kinds[i], params=params_mod.RANDOM)


class CandidateSession:
    def __init__(self, problem, plan: Plan, make_link, timed: bool = True, copies_on: str = "device", group=None,
                 hold_arena: list = None):
        """`timed`: calibrate and run the plan's timed calls; a generalization trial (generalize.py) runs only
        its correctness trials, so it needs neither the calibration nor the private copies of timed outputs.
        `copies_on`: where those copies live, "device" or "host" (memory.place_audit_copies).
        `hold_arena`: a list the session's own arena goes into when it ends, its buffers no longer referenced,
        for the caller to free later (Session.held_arenas); None: freed as the session ends.
        `group`: the screen_group.ScreenGroup this session is one candidate of. The group owns the slot, the
        clock and the check for other users of the GPU, stages every call once for all its candidates, and
        drives this session's steps itself (never `run`); a candidate of a group keeps no private copies, so
        its timed calls are compared at their secret positions and none is checked in full."""
        t_setup = time.perf_counter_ns()
        self.problem, self.plan, self.timed, self.group = problem, plan, timed, group
        self.hold_arena = hold_arena if group is None else None  # a group's arena is the group's
        self.record = Record()
        self.phases = Phases(self.record.phase_seconds)
        self.record.audits["copies"] = copies_on if group is None else "none"
        # Which engine runs the full checks' element test for floating outputs on this device
        # (fused_compare.py): a request error before any work when CUTEGEN_COMPARE names none.
        self.record.audits["compare"] = fused_compare.engine_on(problem.device)
        if group is None:
            self.arena = SharedArena(problem.device)
            self.slot = Slot(self.arena, problem)
            self.clock = _Clock(problem.device)
        else:
            self.arena, self.slot, self.clock = group.arena, group.slot, group.clock
        self.secret_out = self.secret_in = None  # a call's secret positions (_draw_positions)
        # Private copies of output set 0 (never exported to the runner): every timed call's outputs are
        # copied into one of them right after the gather -- the last one, or, for a call chosen for a full
        # audit, one that is kept until the check after the loop (_timed_calls).
        # On the host (pinned, so each copy is one DMA) where the device cannot hold them beside the session:
        # every timed call's copy goes there alike, so the gap after a call still tells nothing.
        on_host = copies_on == "host"
        pinned = on_host and problem.device.type == "cuda"
        with torch.no_grad():
            self.copies = [[torch.empty(o.shape, dtype=o.dtype, device="cpu", pin_memory=pinned) if on_host
                            else torch.empty_like(o) for o in self.slot.outputs[0]]
                           for _ in range(FULL_AUDITS + 1 if timed and group is None else 0)]
        self.sysrand = secrets_mod.SystemRandom()
        self.make_link = make_link
        self.link = None
        self.previous = None  # the last staged call's spec (to name result reuse)
        # Per (output, input kind), the tightest rel-L2 limit the correctness trials with random parameters (as
        # every timed call has) judged it by -- PyTorch's own error on those inputs included: half of it is the
        # screen of the timed calls (_compare_call). None where an output is not floating (integers and
        # booleans are always checked exactly).
        self.trial_rel_l2 = {}
        # Other users of the GPU (gpu_share.py): checked around the timed calls, where no code of the candidate
        # can have work on the GPU. None on the CPU (tests) and in a session that times nothing.
        self.share = gpu_share.for_device(problem.device, idle_window=not plan.screening) if timed and group is None \
            else None
        self.runner_pids = []  # every runner this session started: the judge's own processes on the GPU
        # The trials (indices into plan.trials) that wait for the time: only with the loop's bar, in a session of
        # its own that times the kernel (a screening group's plan has one problem trial and no bar).
        self.deferred = [i for i, spec in enumerate(plan.trials) if spec.kind in DEFERRABLE_KINDS] \
            if plan.keep_bar_ms is not None and timed and plan.runs > 0 and group is None else []
        self.timed_since_us = None  # when the timed calls began, on the clock NVML stamps its samples with
        self.phases.add("setup", time.perf_counter_ns() - t_setup)  # the slot, the private copies, the checks' state

    # ---- the whole session ------------------------------------------------------------------------
    def run(self) -> dict:
        try:
            try:
                try:
                    with self.phases("runner_start"):  # setup, calibration, load (twice for a size to ask: _start)
                        self._start()
                    with self.phases("trials"):
                        self._trials()
                    if self.timed:
                        self._timed_calls()
                    self._end_runner()
                except runner_link.LinkError as exc:
                    raise self._stop_for_link(exc)
            except Stop as stop:
                self.record.verdict, self.record.reason, self.record.failed_check = stop.verdict, stop.reason, stop.failed_check
                self.record.refused = stop.refused
            except ProblemError as exc:  # the problem's code failed in one of the judge's steps: say which
                phase = self.phase
                raise ProblemError(f"{exc} (the judge was at: {phase})" if phase else str(exc)) from exc
            finally:
                if self.link is not None and "end" not in self.record.runner:
                    self.record.runner["end"] = self.link.kill().describe()
            with self.phases("share_after"):
                self._check_share_after()
        finally:
            # Nothing of ours may still hold a shared buffer when the arena frees them.
            with self.phases("release"):
                self.link = self.slot = self.secret_out = self.secret_in = self.copies = None
                if self.hold_arena is not None:
                    self.hold_arena.append(self.arena)
                else:
                    self.arena.release()
        return self.record.to_dict()

    def _end_runner(self):
        """Asks the runner to quit and waits for it: one that did not exit cleanly, or printed, fails the kernel."""
        with self.phases("runner_end"):
            end = self.link.close()
        self.record.runner["end"] = end.describe()
        if end.timed_out or end.signal or end.exit_code != 0:
            raise Stop("crash", f"the runner process did not exit cleanly after its last call ({end.describe()})")
        if printed := self.link.printed():
            raise Stop("printed_output", printed)

    def _check_share_after(self):
        """With the runner gone (the only point after which no work of the candidate can be on the GPU), a
        verdict that rests on the times stands only if no other program worked on the GPU meanwhile: else
        GpuBusy, and cutegen measures again. Whatever the candidate left running cannot pass for another
        user here, nor can its context: it has exited."""
        if self.share is None:
            return
        if self.timed_since_us is not None and self.record.verdict in TIMED_VERDICTS:
            self.share.check("checked after the timed calls, the runner gone", self.runner_pids, self.timed_since_us)
        self.record.gpu_share = self.share.record()

    def _stop_for_link(self, exc: runner_link.LinkError) -> Stop:
        end = exc.end.describe() if exc.end else ""
        self.record.runner["end"] = end
        printed = self.link.printed() if self.link is not None else ""
        if exc.kind == "timeout":
            return Stop("timeout", f"the kernel did not finish within {self.plan.call_timeout_s:.0f} s ({self.phase}): "
                                   "a hang or an infinite loop")
        if exc.kind == "tampering":
            return Stop("tampering", f"{exc.message} ({self.phase})")
        if exc.kind == "forbidden_call":
            return Stop("forbidden_call", f"{exc.message} ({self.phase}); the kernel's host code may only launch kernels")
        if printed:  # a process that died right after printing is reported for the printing
            return Stop("printed_output", printed)
        return Stop("crash", f"{exc.message} ({self.phase})")

    # ---- start and calibration --------------------------------------------------------------------
    _phase = "starting the runner"
    overrun_check = "probe"  # set by each calibration from CUTEGEN_OVERRUN_CHECK
    host_cpu = "checked"  # set by each calibration: checked, spin, costly_wait or unavailable
    wait_share = 0.0  # set by each calibration: the runner's polled wait's CPU per time waited
    staging_ns = 0  # set by each calibration: the median time to stage a timed call's set

    @property
    def phase(self) -> str:
        """The judge's step now, named in errors; CUTEGEN_MEMORY_TRACE=1 logs the device memory at each change."""
        return self._phase

    @phase.setter
    def phase(self, step: str):
        memtrace.note(f"end of {self._phase}")
        self._phase = step

    def _start(self):
        self.record.runner["sandbox"] = os.environ.get(SANDBOX_ENV, "full")
        if self.plan.workspace_bytes is not None:
            return self._start_with_known_workspace(self.plan.workspace_bytes)
        cap, why = memory.workspace_cap(self.problem.metadata["memory"], self.problem.device, slot_allocated=True,
                                        copies=self.record.audits["copies"] if self.timed else "none")
        # A guess (Plan.workspace_guess_bytes) within this session's cap: mapped from the start, in a calibrated runner.
        guess = self.plan.workspace_guess_bytes if self.timed and self.plan.workspace_guess_bytes is not None and \
            self.plan.workspace_guess_bytes <= cap else None
        if guess is not None:
            self.slot.add_workspace(guess)
        self.link = self.make_link(self.plan, self.slot, self.problem)
        # A kernel with a workspace is loaded twice: to ask its size, then in a runner that has the workspace mapped,
        # and only the second runner's calibration is used. Told so by the judge (Plan.expects_workspace), the first
        # runner is not calibrated: 16 stagings and the wait for other users' work, 0.4-0.9 s at KernelBench sizes.
        sizing_only = self.timed and self.plan.expects_workspace and guess is None
        ready = self._start_runner(calibrate=not sizing_only)
        requested = _workspace_request(ready)
        if guess is not None and requested == guess:
            self.record.workspace = {"bytes": guess, "cap_bytes": cap, "guessed": True}
            return
        if requested is None:
            if sizing_only or guess is not None:
                # The hint was wrong (the kernel asks for no workspace), and this runner loaded it uncalibrated or
                # with a workspace it does not use: a fresh runner is calibrated before its own load.
                self._next_runner("giving the kernel a calibrated runner", "the runner that was to ask the workspace size")
                self._drop_guess(guess)
                self.link = self.make_link(self.plan, self.slot, self.problem)
                if _workspace_request(self._start_runner()) is not None:
                    raise Stop("load_failed", "cutegen_workspace_bytes asked for no workspace at the first load and for "
                                              "one at the second: the size may depend only on the shapes and dtypes")
            return
        if requested > cap:
            raise workspace_too_big(requested, cap, why)
        self.record.workspace = {"bytes": requested, "cap_bytes": cap}
        if guess is not None:
            self.record.workspace["guess_bytes"] = guess
        # The size is known only once the candidate is loaded, and by then the runner's sandbox is closed.
        # Rather than map a new buffer inside it, a second runner starts with the workspace in its session,
        # mapped at setup with the rest of the slot like every other buffer.
        self._next_runner("handing the workspace to a fresh runner", "the runner that asked the workspace size")
        self._drop_guess(guess)
        self.slot.add_workspace(requested)
        self.link = self.make_link(self.plan, self.slot, self.problem)
        again = _workspace_request(self._start_runner())
        if again != requested:
            raise Stop("load_failed", f"cutegen_workspace_bytes asked for {requested} bytes at the first load and {again} "
                                      "at the second: the size may depend only on the shapes and dtypes")

    def _drop_guess(self, guess):
        """The guessed workspace freed, the runner that mapped it gone (_next_runner waited for its exit)."""
        if guess is not None:
            self.slot.drop_workspace()

    def _start_with_known_workspace(self, known: int):
        """One runner, calibrated, with the workspace the library asked for in an earlier session at these shapes
        mapped from the start. The size is a claim of the judge's, not of the kernel's: the kernel must ask for the
        same at this load, and the cap is this session's."""
        cap, why = memory.workspace_cap(self.problem.metadata["memory"], self.problem.device, slot_allocated=True,
                                        copies=self.record.audits["copies"] if self.timed else "none")
        if known > cap:
            raise workspace_too_big(known, cap, why)
        self.slot.add_workspace(known)
        self.link = self.make_link(self.plan, self.slot, self.problem)
        requested = _workspace_request(self._start_runner())
        if requested != known:
            now = "none" if requested is None else f"{requested} bytes"
            raise Stop("load_failed", f"cutegen_workspace_bytes asked for {known} bytes in an earlier session at these "
                                      f"shapes and for {now} now: the size may depend only on the shapes and dtypes")
        self.record.workspace = {"bytes": known, "cap_bytes": cap, "sized_before": True}

    def _next_runner(self, phase: str, which: str):
        """Quits the current runner (it loaded the kernel) for another: its record goes under `runner.sizing`, and
        it must have exited cleanly. The caller makes the next link."""
        self.phase = phase
        end = self.link.close()
        first = self.record.runner
        self.record.runner["sizing"] = {key: first.pop(key) for key in ("setup", "ready", "start_ms", "load_ms",
                                                                         "calibrated") if key in first}
        self.record.runner["sizing"]["end"] = end.describe()
        if end.timed_out or end.signal or end.exit_code != 0:
            raise Stop("crash", f"{which} did not exit cleanly ({end.describe()})")

    def _start_runner(self, calibrate: bool = True) -> dict:
        """Setup, calibration (when `calibrate` and the session is timed) and `load` of the current runner; its load
        reply."""
        self._set_up_runner()
        self.record.runner["calibrated"] = self.timed and calibrate
        if self.timed and calibrate:
            self.phase = "calibration (before the kernel was loaded)"
            self._calibrate()
            if self.share is not None and not self.share.checks and self.plan.runs > 0:
                # The runner has run only the harness's code, and every ping of the calibration waited for the
                # GPU: the judge launches nothing while the GPU's utilisation is sampled.
                self.phase = "checking for other users of the GPU"
                self.clock.sync()
                self.share.check("checked before the kernel was loaded", self.runner_pids)
        return self._load_kernel()

    def _set_up_runner(self):
        """The current runner started, with the slot mapped; the candidate is not loaded yet."""
        self.phase = "starting the runner"
        self.runner_pids.append(self.link.pid)
        # Start and load times are recorded so the sandbox's cost can be measured as an A/B
        # (benchmarks/sandbox_overhead_gpu.sh): the runner applies its sandbox in these two phases.
        t0 = time.perf_counter_ns()
        setup = self.link.start()
        self.record.runner["start_ms"] = (time.perf_counter_ns() - t0) / 1e6
        self.record.runner["setup"] = setup
        if not setup.get("setup"):
            raise RequestError(f"the runner could not set up the shared buffers: {setup.get('message', setup)}")

    def _load_kernel(self) -> dict:
        """The current runner's `load` of the candidate; its reply."""
        self.phase = "loading the kernel library"
        t0 = time.perf_counter_ns()
        ready = self.link.load(self.slot.example_scalars).reply
        self.record.runner["load_ms"] = (time.perf_counter_ns() - t0) / 1e6
        self.record.runner["ready"] = ready
        if not ready.get("ready"):
            raise Stop("load_failed", ready.get("message") or "the runner could not load the kernel library")
        if printed := self.link.printed():
            raise Stop("printed_output", printed)
        return ready

    def _calibrate(self):
        """Round trip, probe and gather with the candidate not loaded: the baselines every call's
        overrun is measured against. The runner's code is still only ours here, so none of these
        numbers can be inflated by the candidate."""
        pings, probes, posts, gathers, waits, spans, cpus, stagings = [], [], [], [], [], [], [], []
        sweep, check = calibration_sweep(), overrun_check()
        self.overrun_check = check
        for i in range(CALIBRATION_ROUNDS):
            # The sequence of a timed call with the harness's own work in the candidate's place: a fresh set
            # staged (inputs written, outputs poisoned) and the L2 flushed before the probe — without the
            # staging, the probe after it read 0.03-0.1 ms above its calibrated p90 on the H200 when the
            # problem moves 13 GB (0.006 ms at 0.6 GB), charged to every honest call as overrun; the ping
            # sweeps the runner's 128 MiB buffer in the runner's context (a call that streams through its
            # tensors leaves the caches cold and the GPU in the other context — calibrated after an empty
            # kernel instead, an honest kernel's every gather read as overrun); the gather right after it.
            kind = TIMED_KINDS[i % len(TIMED_KINDS)]
            self._draw_positions()
            t_stage = time.perf_counter_ns()
            self.slot.stage(self.problem, CallSpec(seed=self.sysrand.getrandbits(CALL_SEED_BITS), kind=kind,
                                                   params=params_mod.RANDOM),
                            flush=self.clock.flush, output_sets=(0,))
            stagings.append(time.perf_counter_ns() - t_stage)  # Slot.stage ends synchronised
            w0 = self.link.wait_ns()  # after the staging, as in a timed call: the CPU waits of what is timed
            probe, before = self.clock.probe_marked("start")
            probes.append(probe)
            ping = self.link.ping(sweep=sweep)
            event = ping.reply.get("event_ms")
            event_ns = event * 1e6 if isinstance(event, (int, float)) and event > 0 else 0
            # The round trip's overhead: wall time beyond the sweep's own GPU time (our code's events:
            # the candidate is not loaded yet).
            pings.append(ping.wall_ns - event_ns)
            cpus.append(ping.runner_cpu_ns)
            post, after = self.clock.probe_marked("end") if check == "probe" else (0, None)
            posts.append(post)
            self._warm_gather_on_cpu()
            t0 = time.perf_counter_ns()
            if after is None:  # the gather is the check after the call: the span ends in its window
                after = self.clock.mark()
            self.secret_out.gather(self.slot.outputs[0])
            self.secret_in.gather(self.slot.inputs + self.slot.params)
            gathers.append(time.perf_counter_ns() - t0)
            w1 = self.link.wait_ns()
            waits.append(None if w0 is None or w1 is None else w1 - w0)
            if self.copies:  # as after every timed call (not timed itself)
                self._copy_outputs(self.copies[-1])
            self.clock.sync()
            spans.append(self.clock.span_ns(before, after) - event_ns)
        # The first rounds warm things up. A round in which either end waited for a CPU measured the
        # machine's load: it is left out of the limits (nothing of the candidate runs yet, so leaving
        # rounds out cannot favour it), and too few clean rounds are no calibration at all.
        rounds = [r for r in zip(pings, probes, gathers, posts, waits, spans)][2:]
        clean = [r for r in rounds if not cpu_wait.disturbed(r[4], r[0] + r[1] + r[2] + r[3])]
        if len(clean) < len(rounds) // 2:
            raise cpu_wait.CpuBusy(cpu_wait.busy_message("calibration rounds", len(rounds) - len(clean), len(rounds),
                                                         [_ms(r[4]) for r in rounds if r[4] is not None]))
        pings, probes, gathers, posts, _, spans = ([r[k] for r in clean] for k in range(6))
        # The least round trip seen, not the median: what is subtracted from a call must never exceed what
        # the call itself cost (on an H200 the median ping once exceeded a 0.1 ms kernel's whole round
        # trip, and the kernel came out at 0.0006 ms). Erring high is the safe side of a promise.
        self.ping_ns = max(0, min(pings))
        self.probe_limit_ns = _quantile(sorted(probes), 0.9)
        self.gather_limit_ns = _quantile(sorted(gathers), 0.9)
        self.post_limit_ns = _quantile(sorted(posts), 0.9)
        # The GPU span's overhead, least value as for the ping: evidence beside the time (see _timed_calls).
        self.span_overhead_ns = max(0, min(spans))
        # The harness's own work per call, both kinds alike, the warm-up rounds left out: what the timed calls'
        # staging budget divides (Plan.fitted_runs). The candidate is not loaded yet, so it cannot sway the count.
        self.staging_ns = int(statistics.median(stagings[2:]))
        self._calibrate_wait_share(cpus)
        self.record.calibration = {"ping_ms": _ms(self.ping_ns), "ping_median_ms": _ms(statistics.median(pings)),
                                   "probe_p90_ms": _ms(self.probe_limit_ns),
                                   "gather_p90_ms": _ms(self.gather_limit_ns), "rounds": len(pings), "sweep": sweep,
                                   "overrun_check": check, "post_probe_p90_ms": _ms(self.post_limit_ns),
                                   "disturbed_rounds": len(rounds) - len(clean),
                                   "span_overhead_ms": _ms(self.span_overhead_ns), "kinds": list(TIMED_KINDS),
                                   "staging_ms": _ms(self.staging_ns),
                                   "cpu_wait": "unavailable" if any(w is None for w in waits) else "schedstat",
                                   "host_cpu": self.host_cpu, "wait_share": self.wait_share, "runner_wait": runner_wait(),
                                   "runner_cpu_ms": _ms(statistics.median(cpus)) if None not in cpus else None}

    def _calibrate_wait_share(self, cpus: list):
        """Whether host computing is judged in this session, and what the runner's polled wait costs in CPU
        per time waited (cpu_time.py): long pings, the candidate not loaded yet, so only the harness's code
        runs. Judged only with a wait that sleeps (block or poll), where the runner's CPU time can be read, and
        where the wait is cheap enough to tell host work from it."""
        self.wait_share = None
        if runner_wait() == "spin":
            self.host_cpu = "spin"
            return
        if any(c is None for c in cpus):
            self.host_cpu = "unavailable"
            return
        longs = [self.link.ping(sweep="own", repeat=cpu_time.LONG_PING_REPEAT) for _ in range(cpu_time.WAIT_SHARE_PINGS)]
        self.wait_share = cpu_time.wait_share([(p.runner_cpu_ns, p.wall_ns) for p in longs], _spin_ns())
        self.host_cpu = ("unavailable" if self.wait_share is None else
                         "costly_wait" if self.wait_share > cpu_time.MAX_WAIT_SHARE else "checked")

    # ---- one call ---------------------------------------------------------------------------------
    def _warm_gather_on_cpu(self):
        """On the CPU (the tests' fake runner) the gather's first read after an idle spell measures only the
        machine (the probe's note in _Clock.probe_marked): the same positions are read once untimed first. On a
        GPU nothing is added: the gather's time there is evidence."""
        if self.problem.device.type != "cuda":
            self.secret_out.gather(self.slot.outputs[0])
            self.secret_in.gather(self.slot.inputs + self.slot.params)

    def _call(self, staged, output_set: int):
        exchange = self.link.call(output_set, self.slot.scalars(staged))
        if printed := self.link.printed():
            raise Stop("printed_output", printed)
        reply = exchange.reply
        if "rc" not in reply:  # the runner refused the command: a harness bug (or a forgery that stops the judge)
            raise RequestError(f"the runner did not run the call ({self.phase}): {reply.get('error', reply)}")
        if reply.get("cuda_error"):
            raise Stop("cuda_error", f"CUDA error while running the kernel ({self.phase}): {reply['cuda_error']}")
        rc = reply.get("rc", 0)
        if rc != 0:
            what = CUTEGEN_ERROR_NAMES.get(rc) or reply.get("rc_name") or str(rc)
            raise Stop("kernel_error", f"cutegen_forward returned {rc} ({what}) ({self.phase})",
                       refused=rc in CUTEGEN_ERROR_NAMES)
        return exchange

    # ---- correctness trials -----------------------------------------------------------------------
    def _trials(self, deferred: bool = False):
        """The plan's correctness trials, in its order: those not deferred, or (`deferred`) those that are."""
        for index, spec in enumerate(self.plan.trials):
            if (index in self.deferred) != deferred:
                continue
            self.phase = f"trial {index} ({spec.kind} inputs)"
            staged = self.slot.stage(self.problem, spec)
            report = self._trial(index, staged)
            staged = None  # before the next trial's are made, or the diagnosis makes the previous call's
            if not report["pass"]:
                raise self._failed(report, f"trial {index} ({spec.kind} inputs) failed")
            self.previous = spec

    def _trial(self, index: int, staged, expected: dict = None) -> dict:
        """Correctness trial `index` on the set staged in the slot: two runs, checked in full; the check's report.
        `expected`: as for _check_full."""
        self.phase = f"trial {index} ({staged.spec.kind} inputs)"
        self._call(staged, 0)
        self.slot.repoison_workspace()
        self._call(staged, 1)
        return self._check_full(staged, self._slot_sets((0, 1)), label={"trial": index}, expected=expected)

    def _slot_sets(self, sets) -> list:
        """(set index, output tensors, poison pattern) of the slot's output sets, for _check_full."""
        return [(s, self.slot.outputs[s], self.slot.output_patterns[s]) for s in sets]

    def _failed(self, report: dict, what: str, outputs: list = None, previous=None) -> Stop:
        """The Stop for a failed check report (the last one in record.checks). `outputs`: the tensors the
        report is about when they are not the slot's, `previous`: the spec of the call before (default:
        the last call staged), for naming result reuse."""
        reason = report["reason"]
        index = len(self.record.checks) - 1
        previous = previous or self.previous
        # In a screening group the slot's outputs may be another candidate's by now, and the staged set is held
        # for the candidates after this one, so the previous call's set is not made again beside it: a mismatch.
        if reason == "mismatch" and self.group is None and self._is_previous_answer(report, outputs, previous):
            report["reason"] = "result_reuse"
            return Stop("result_reuse", f"{what}: the output is the previous call's answer: the kernel reuses results of "
                                        "earlier calls instead of computing", index)
        return Stop(reason, f"{what}: {reason}{self._workspace_hint(reason)}", index)

    def _workspace_hint(self, reason: str) -> str:
        """NaN in the outputs of a kernel with a workspace may be the workspace's poison, read before
        this call wrote it: say so, since `unwritten` alone points at missing stores."""
        if reason != "unwritten" or self.slot.workspace is None:
            return ""
        return (" (the kernel has a workspace, which is filled with NaN before every call: the NaN may also come "
                "from workspace memory read before this call wrote it)")

    def _is_previous_answer(self, report: dict, outputs: list, previous) -> bool:
        if previous is None:
            return False
        prev = self.slot.regenerate(self.problem, previous)
        refs = self.problem.reference.compute(prev.inputs, prev.params)
        if outputs is None:
            outputs = self.slot.outputs[report["outputs"][0].get("set", 0)]
        for out, ref in zip(outputs, refs):
            floor = compare.tolerance(self.plan.precision, self.problem.dtype, out.dtype)
            ref = compare.expected_values(ref, out.dtype)
            loose = compare.Tolerance(floor.atol * 10, floor.rtol * 10, max(floor.rel_l2_limit * 10, 1e-4))
            if not compare.compare(out, ref, loose, compare.max_abs_finite(ref))["pass"]:
                return False
        return True

    def _check_full(self, staged, output_sets: list, label: dict, check_inputs: bool = True, expected: dict = None) -> dict:
        """Every element of the output sets -- (set index, tensors, poison pattern) each -- against the
        reference, the inputs and parameters in the slot bit for bit (`check_inputs`), two sets against
        each other. Appends the report to record.checks. `expected`: a screening group's store of the reference
        and PyTorch's result for `staged`, computed by the first candidate's check and read by the others'."""
        problem, policy = self.problem, self.plan.precision
        mutated = []
        names = problem.input_names + problem.param_names
        shared = self.slot.inputs + self.slot.params
        for name, now, original in zip(names, shared, list(staged.inputs) + list(staged.params)):
            if check_inputs and now is not None and isinstance(original, torch.Tensor) and compare.mutated(now, original):
                mutated.append(name)
        if expected is not None and "refs" in expected:
            refs, natives = expected["refs"], expected["natives"]
        else:
            refs = problem.reference.compute(staged.inputs, staged.params)
            memtrace.note(f"{self._phase}: the full check's reference")
            shapes = [tuple(r.shape) for r in refs]
            if shapes != problem.output_shapes:
                # The harness allocates the outputs from the shapes seen at load.
                raise ProblemError(f"{problem.path}: forward() returned outputs of shapes {shapes} for seed "
                                   f"{staged.spec.seed} but {problem.output_shapes} at load; output shapes must not "
                                   "depend on input values")
            natives = problem.reference.native(staged.inputs, staged.params)
            memtrace.note(f"{self._phase}: the full check's native result")
            if expected is not None:
                expected.update(refs=refs, natives=natives)
        reports, agree, r2r = [], True, 0.0
        for i, (ref, native) in enumerate(zip(refs, natives)):
            out_dtype = self.slot.outputs[0][i].dtype
            ref, scale = compare.expected_and_scale(ref, out_dtype)
            floor = compare.tolerance(policy, problem.dtype, out_dtype)
            torch_report = compare.compare(native, ref, floor, scale)
            tol = compare.with_torch_error(floor, torch_report)
            if "trial" in label and (staged.spec.params == params_mod.RANDOM or not problem.params):
                # Without parameters the problem's own and drawn ones are the same (none): a trial of either is
                # one of inputs drawn as every timed call's are (`--trials 1` plans only an own-parameter one).
                self._note_trial_limit(i, staged.spec.kind, tol, out_dtype)
            per_set = [dict(compare.compare(outs[i], ref, tol, scale, poison=pattern), set=s)
                       for s, outs, pattern in output_sets]
            failing = sorted((r for r in per_set if not r["pass"]), key=lambda r: r["unwritten_count"] == 0)
            chosen = dict(index=i, **(failing[0] if failing else per_set[0]))
            chosen["torch"] = {"rel_l2_err": torch_report["rel_l2_err"], "max_abs_err": torch_report["max_abs_err"]}
            reports.append(chosen)
            if len(output_sets) == 2:
                same, diff = compare.run_to_run(output_sets[0][1][i], output_sets[1][1][i], tol, scale)
                agree, r2r = agree and same, max(r2r, diff)
        memtrace.note(f"{self._phase}: the full check's comparisons")
        del refs, natives
        reason = _reason(reports, agree, mutated)
        for r in reports:
            r.pop("pass")
        report = dict(label, kind=staged.spec.kind, seed=staged.spec.seed, params=staged.spec.params,
                      reason=reason, outputs=reports, inputs_mutated=mutated, run_to_run_max_abs_diff=r2r)
        report["pass"] = reason == "ok"
        self.record.checks.append(report)
        return report

    def _note_trial_limit(self, i: int, kind: str, tol: "compare.Tolerance", out_dtype: torch.dtype):
        seen = self.trial_rel_l2.get((i, kind), float("inf"))
        self.trial_rel_l2[(i, kind)] = None if seen is None or not out_dtype.is_floating_point else \
            min(seen, tol.rel_l2_limit)

    def _screen_tolerances(self, kind: str) -> list:
        """The screen of a timed call with `kind` inputs, per output: half the policy's per-element bound
        (without PyTorch's error in it) and half the trials' rel-L2 limit for that kind. None when some
        output has none (not floating, or no trial of that kind with random parameters): the exact check.

        Why it passes nothing the exact check would fail. Per element: within half the policy's bound of
        PyTorch's value is within the policy's bound plus PyTorch's own error at that position of the float64
        reference, and the exact check allows five times PyTorch's largest error at the positions. The rel-L2:
        at most 0.75 x the trials' limit from PyTorch's (with the estimate's 50 % room) plus PyTorch's own
        rel-L2 on the call is within the exact check's 1.5 x max(floor, 5 x that rel-L2) whenever PyTorch's
        error on the call is at least 0.58 of its error on the trials of the same kind -- a whole-output
        statistic on inputs drawn alike, which does not move that much."""
        floor_of = lambda out: compare.tolerance(self.plan.precision, self.problem.dtype, out.dtype)
        tols = []
        for i, out in enumerate(self.slot.outputs[0]):
            limit = self.trial_rel_l2.get((i, kind))
            if limit is None:
                return None
            floor = floor_of(out)
            tols.append(compare.Tolerance(floor.atol / 2, floor.rtol / 2, limit / 2, 0.0))
        return tols

    # ---- timed calls ------------------------------------------------------------------------------
    def _draw_positions(self):
        """Fresh secret positions for the next call: nothing one call could learn of them helps the next."""
        self.secret_out = audit.SecretPositions(self.slot.outputs[0], self.problem.device)
        self.secret_in = audit.SecretPositions(self.slot.inputs + self.slot.params, self.problem.device)

    def _copy_outputs(self, into: list):
        """Output set 0 into private tensors of the same shapes, on the worker's stream (ordered before the
        next staging's poison). The same copy, of the same size, follows every timed call."""
        with torch.no_grad():
            for dst, src in zip(into, self.slot.outputs[0]):
                dst.copy_(src)

    def _timed_calls(self):
        timed = self._timed_begin()
        if timed is None:
            return
        for i in range(timed.total):
            # The last call's pristine values, and what was gathered of it, go before this call's are made,
            # after every call alike: two staged sets side by side were 6 GiB more at a staging of
            # KernelBench's softmax, which memory.check_fits counts once.
            staged = None
            self.phase = f"timed call {i - timed.warmup}" if i >= timed.warmup else f"warm-up call {i}"
            spec = timed.spec(i, self.sysrand)
            self._draw_positions()
            t_stage = time.perf_counter_ns()
            staged = self.slot.stage(self.problem, spec, flush=self.clock.flush, output_sets=(0,))
            self.phases.add("timed_staging", time.perf_counter_ns() - t_stage)
            failed = self._timed_call(timed, i, staged)
            if failed is not None:
                staged = None  # the diagnosis makes the previous call's values (_is_previous_answer)
                raise self._failed(*failed)
        staged = None  # the last call's, before the full audits make theirs
        self._timed_end(timed)

    def _timed_begin(self, kinds: list = None, candidates: int = 1) -> "_TimedCalls":
        """The timed calls' plan, fixed before the first call (None when there are none): how many, from
        calibration alone (the candidate cannot change it), each call's input kind, and which are checked in
        full. `kinds`: a screening group's, drawn once for all its `candidates`, each of whom has the set written
        again, so the staging budget is divided among them."""
        plan = self.plan
        if plan.runs == 0:
            return None
        runs = plan.fitted_runs(self.staging_ns * candidates)
        if runs < plan.runs:
            self.record.audits["timed_budget"] = {"asked": plan.runs, "seconds": plan.timed_budget_s,
                                                  "staging_ms": _ms(self.staging_ns)}
            if candidates > 1:
                self.record.audits["timed_budget"]["candidates"] = candidates
        if kinds is None:
            # Every call's seed and kind come from the operating system's generator, the seeds one call at a
            # time (_TimedCalls.spec): nothing the kernel sees can predict the next call's inputs. When they were
            # derived from one seed (seed_k = a·T + b·k), a kernel could recover a warm-up call's seed from its
            # inputs (2^31 Philox evaluations take a GPU well under a second), compute every timed call's inputs
            # and answers during the untimed warm-up, and copy them out when timed: correct values, every audit
            # passed, the time of a copy (attacks/every_call_checked/predict_next_inputs.cu).
            kinds = list(TIMED_KINDS) * ((runs + 1) // 2)
            self.sysrand.shuffle(kinds)
            kinds = [self.sysrand.choice(TIMED_KINDS) for _ in range(plan.warmup)] + kinds[:runs]
        # Every timed call is compared with the reference at its secret positions, and the work after a call
        # is the same for every call: the gather, the copy of its outputs into a private buffer, the reference
        # at those positions. Until 2026-12 a random quarter was compared, and the reference computed after an
        # audited call made the gap before the next call longer on the GPU's own clock: a kernel could count
        # the audits left and cheat once none were (attacks/every_call_checked/skip_after_audits.cu). Which
        # calls are also checked in full is drawn here; they differ from the others only in which private
        # buffer their copy goes to. (None in a screening group, which keeps no copies.)
        full = sorted(self.sysrand.sample(range(runs), min(FULL_AUDITS, runs))) if self.copies else []
        self.timed_since_us = gpu_share.now_us()
        return _TimedCalls(runs=runs, warmup=plan.warmup, kinds=kinds, full=full)

    def _timed_call(self, timed: "_TimedCalls", i: int, staged, expected: dict = None):
        """Call `i` of the plan (a warm-up or a timed one) on the set staged in the slot (the fresh secret
        positions drawn): timed, gathered, checked right after it, compared. Returns None, or -- the call
        failed its comparison -- the arguments of the Stop to raise (_failed), which the caller raises once
        it has let go of the staged values. `expected`: a screening group's store of PyTorch's result for
        `staged`, computed by the first candidate's comparison and read by the others'."""
        spec = staged.spec
        is_timed = i >= timed.warmup
        k = i - timed.warmup
        self.phase = f"timed call {k}" if is_timed else f"warm-up call {i}"
        t_call = time.perf_counter_ns()
        w0 = self.link.wait_ns()
        probe, before = self.clock.probe_marked("start")
        exchange = self._call(staged, 0)
        post, after = self.clock.probe_marked("end") if self.overrun_check == "probe" else (0, None)
        self._warm_gather_on_cpu()
        t0 = time.perf_counter_ns()
        if after is None:
            after = self.clock.mark()
        got_out = self.secret_out.gather(self.slot.outputs[0])
        got_in = self.secret_in.gather(self.slot.inputs + self.slot.params)
        gather = time.perf_counter_ns() - t0
        w1 = self.link.wait_ns()
        waited = None if w0 is None or w1 is None else w1 - w0
        # After the call's time and its gather are taken, so never charged to it.
        copy = None
        if self.copies:
            copy = self.copies[timed.full.index(k) if is_timed and k in timed.full else -1]
            self._copy_outputs(copy)
        self.phases.add("timed_calls", time.perf_counter_ns() - t_call)  # probes, call, gather, copy
        if not is_timed:
            self.previous = spec
            return None
        self._completion(got_out, got_in, staged, k)
        probe_excess, gather_excess = max(0, probe - self.probe_limit_ns), max(0, gather - self.gather_limit_ns)
        post_excess = max(0, post - self.post_limit_ns)
        overrun = probe_excess + charge_after_call(self.overrun_check, post_excess, gather_excess)
        event = exchange.reply.get("event_ms")
        timed.events.append(event if isinstance(event, (int, float)) and event >= 0 else None)
        # Never below what the stream's own events saw: a runner can claim less (a lie the hidden-work
        # check catches) but an honest kernel's GPU time is a floor for the time reported.
        wall = max(max(0.0, exchange.wall_ns - self.ping_ns) + overrun, (timed.events[-1] or 0.0) * 1e6)
        timed.walls[spec.kind].append(_ms(wall))
        # The call on the GPU's clock: from the worker's mark before the command to its mark after the
        # reply, less the least such span of a ping. The second mark is stamped only once the GPU gets
        # to the worker's stream, so a reply sent before the kernel's work was done does not shorten it.
        # Recorded beside the time, not charged (yet): the A/B of the two on a GPU decides.
        self.clock.sync()
        span = max(0, self.clock.span_ns(before, after) - self.span_overhead_ns)
        # The two parts of the overrun apart: which side of the call the GPU was still busy on.
        # Waiting for a CPU (either end) inflates this call's time; it stays in the time reported (that
        # errs high), but a disturbed call is no evidence of hidden work (_summarise).
        self.record.calls.append({"kind": spec.kind, "seed": spec.seed, "wall_ms": _ms(wall), "overrun_ms": _ms(overrun),
                                  "probe_excess_ms": _ms(probe_excess), "gather_excess_ms": _ms(gather_excess),
                                  "post_probe_excess_ms": _ms(post_excess), "span_ms": _ms(span),
                                  "event_ms": timed.events[-1], "cpu_wait_ms": None if waited is None else _ms(waited),
                                  "disturbed": cpu_wait.disturbed(waited, probe + exchange.wall_ns + post + gather),
                                  "runner_cpu_ms": None if exchange.runner_cpu_ns is None else _ms(exchange.runner_cpu_ns),
                                  "host_busy": self.host_cpu == "checked" and cpu_time.host_busy(
                                      exchange.runner_cpu_ns, exchange.wall_ns, self.wait_share, _spin_ns())})
        with self.phases("timed_compare"):
            failed = self._compare_call(staged, got_out, k, expected)
        if failed is not None:
            return failed
        if k in timed.full:
            timed.kept.append((k, spec, self.slot.output_patterns[0], self.previous, copy))
        self.previous = spec
        return None

    def _timed_end(self, timed: "_TimedCalls"):
        """After the last timed call: the full audits of the calls chosen for them and the deferred trials, then the
        time and the checks on all the calls together. With the loop's bar, a kernel whose time (the median
        _summarise reports) is not below it skips the first two: it is rolled back whatever they would show, and
        the record's `audits.deferred` says what was left out."""
        self.record.audits["timed_calls"] = timed.runs
        bar = self.plan.keep_bar_ms
        median = max((_stats(v)["median_ms"] for v in timed.walls.values() if v), default=None)
        if bar is not None and self.group is None and median is not None and not median < bar:
            self.record.audits["deferred"] = {"bar_ms": bar, "median_ms": median, "full_audits": len(timed.kept),
                                              "trials": [{"trial": i, "kind": self.plan.trials[i].kind}
                                                         for i in self.deferred]}
        else:
            with self.phases("full_audits"):
                self._full_audits(timed.kept)
            with self.phases("trials"):
                self._trials(deferred=True)
        self._summarise(timed.walls, timed.events)

    def _completion(self, got_out: list, got_in: list, staged, k: int):
        """Right after the call: no sampled output position may still hold the poison where that proves it
        unwritten (floating and bool outputs), no sampled input position may have changed."""
        for i, values in enumerate(got_out):
            dtype = self.slot.outputs[0][i].dtype
            if values is not None and (left := audit.poison_left(values, self.slot.output_patterns[0], dtype)):
                raise Stop("unwritten", f"timed call {k}: {left} of {values.numel()} secretly chosen positions of output "
                                        f"{i} still held the worker's poison when the call returned: the kernel skipped "
                                        f"work or finished it after returning")
        changed = audit.inputs_changed(got_in, list(staged.inputs) + list(staged.params), self.secret_in)
        if changed:
            names = self.problem.input_names + self.problem.param_names
            raise Stop("input_mutated", f"timed call {k}: the kernel wrote into {', '.join(names[c] for c in changed)}")

    def _compare_call(self, staged, got_out: list, k: int, expected: dict = None):
        """A timed call's gathered outputs against the reference at the same positions (every timed call:
        the same work after each). Returns None, or -- the call failed -- the arguments of the Stop to raise
        (_failed), which the caller raises once it has let go of the call's staged values.

        First a screen: PyTorch's own result in the problem's dtype (TF32 off, `native`) at the same positions,
        each output held to half of its bounds (_screen_tolerances says which, and why the screen passes
        nothing the exact check would fail). A call it does not pass -- a kernel near its bound, or wrong --
        takes the exact check at once: the float64 reference, the bound made from PyTorch's error on this call's
        own inputs, as every call did before 2026-12-05 (the float64 forward of a transposed 3-d convolution
        took ~0.7 s per call on an H100, most of a session's time). So the work after a call is the same for
        every call the screen passes, and differs only where the kernel's own values at positions drawn afresh
        for that call decide.

        Of PyTorch's result only what the comparisons read is kept (_native_samples: its values at the
        positions, and the screen's scale and norm), and the whole outputs are released before the float64
        reference runs: beside the reference's cast inputs and outputs they were another output's worth of
        memory at the session's peak (KernelBench's softmax on an 80 GB H100 ran out of memory there)."""
        self.record.audits["sampled"] += 1
        screen = self._screen_tolerances(staged.spec.kind)
        if expected is not None and "natives" in expected:
            natives = expected["natives"]
        else:
            natives = self.problem.reference.native(staged.inputs, staged.params)
            if expected is not None:
                # Kept for the group's next candidates on this set: beside the reference an exact check may compute,
                # as in the full checks (the check's workspace, memory.transient_bytes, counts both).
                expected["natives"] = natives
        samples = self._native_samples(natives, got_out, screened=screen is not None)
        del natives
        memtrace.note(f"{self._phase}: the native result, sampled")
        if screen is not None and self._within(got_out, samples, screen):
            self.record.audits["screened"] = self.record.audits.get("screened", 0) + 1
            return None
        label = f"timed call {k} ({staged.spec.kind} inputs)"
        refs = self.problem.reference.compute(staged.inputs, staged.params)
        memtrace.note(f"{self._phase}: the reference")
        for i, (got, ref, native) in enumerate(zip(got_out, refs, samples)):
            if got is None:
                continue
            out_dtype = self.slot.outputs[0][i].dtype
            ref, scale, ref_sq = compare.expected_scale_and_norm(ref, out_dtype)  # the norm: see compare_samples
            floor = compare.tolerance(self.plan.precision, self.problem.dtype, out_dtype)
            positions = self.secret_out.positions(i)
            torch_report = audit.compare_samples(native.values, ref, positions, floor, scale, ref_sq_sum=ref_sq)
            tol = compare.with_torch_error(floor, torch_report)
            report = audit.compare_samples(got, ref, positions, tol, scale, poison=self.slot.output_patterns[0],
                                           ref_sq_sum=ref_sq)
            if not report["pass"]:
                # Floating poison was looked for right after the call (_completion); what is left here for
                # an integer or bool output is its poison at a position where the answer differs.
                reason = "unwritten" if report["unwritten_count"] and not out_dtype.is_floating_point else "mismatch"
                self.record.checks.append({"timed_call": k, "kind": staged.spec.kind, "seed": staged.spec.seed,
                                           "params": staged.spec.params, "sampled": True, "pass": False,
                                           "reason": reason, "inputs_mutated": [], "run_to_run_max_abs_diff": 0.0,
                                           "outputs": [dict(report, index=i, set=0,
                                                            torch={"rel_l2_err": torch_report["rel_l2_err"],
                                                                   "max_abs_err": torch_report["max_abs_err"]})]})
                report.pop("pass")
                return self.record.checks[-1], f"{label}, at the secretly chosen positions"
        return None

    def _native_samples(self, natives: list, got_out: list, screened: bool) -> list:
        """Per output of a timed call, what its comparisons need of PyTorch's own result (None where nothing
        was gathered): its values at the call's secret positions, and, for the screen, the values expected
        there (compare.expected_scale_and_norm of it, sampled) with their scale, norm and element count. The
        same numbers the comparisons took from the whole tensors before, so the same reports, bit for bit."""
        samples = []
        for i, (got, native) in enumerate(zip(got_out, natives)):
            if got is None:
                samples.append(None)
                continue
            positions = self.secret_out.positions(i)
            values, expected, scale, norm = audit.sample(native, positions), None, None, None
            if screened:
                full, scale, norm = compare.expected_scale_and_norm(native, self.slot.outputs[0][i].dtype)
                expected = values if full is native else audit.sample(full, positions)
                del full
            samples.append(_NativeSample(values, expected, scale, norm, native.numel()))
        return samples

    def _within(self, got_out: list, samples: list, tols: list) -> bool:
        """Every gathered output within `tols` of PyTorch's own result at the same positions (audit.compare_sampled:
        each element against its bound, the whole output's rel-L2 estimated from the positions)."""
        for got, native, tol in zip(got_out, samples, tols):
            if got is None:
                continue
            report = audit.compare_sampled(got, native.expected, native.total, tol, native.scale,
                                           poison=self.slot.output_patterns[0], ref_sq_sum=native.norm)
            if not report["pass"]:
                return False
        return True

    def _full_audits(self, kept: list):
        """The timed calls chosen for a full audit, from their private copies, after the loop: their inputs
        made again from the seed, every element compared. (Their inputs were checked at the secret positions
        right after the call; the slot has long been restaged since, so not in full -- the trials do that.)"""
        for k, spec, pattern, previous, copy in kept:
            self.phase = f"the full check of timed call {k}"
            self.record.audits["full"] += 1
            copy = [c.to(self.problem.device) for c in copy]  # a host copy is compared where the reference is
            staged = self.slot.regenerate(self.problem, spec)
            report = self._check_full(staged, [(0, copy, pattern)], label={"timed_call": k}, check_inputs=False)
            staged = None  # as after a trial
            if not report["pass"]:
                raise self._failed(report, f"timed call {k} ({spec.kind} inputs)", outputs=copy, previous=previous)

    def _summarise(self, walls: dict, events: list):
        calls = self.record.calls
        disturbed = sum(1 for c in calls if c["disturbed"])
        if cpu_wait.too_many(disturbed, len(calls)):
            raise cpu_wait.CpuBusy(cpu_wait.busy_message("timed calls", disturbed, len(calls),
                                                         [c["cpu_wait_ms"] for c in calls if c["cpu_wait_ms"] is not None]))
        per_kind = {kind: _stats(v) for kind, v in walls.items() if v}
        slower = max(per_kind, key=lambda kind: per_kind[kind]["median_ms"])
        chosen = per_kind[slower]
        known_events = [e for e in events if e is not None]
        event_median = statistics.median(known_events) if known_events else None
        overrun = sum(c["overrun_ms"] for c in self.record.calls)
        span_median = statistics.median(c["span_ms"] for c in calls if c["kind"] == slower)
        self.record.time = dict(chosen, slower_kind=slower, per_kind=per_kind, overhead_ms=_ms(self.ping_ns),
                                overrun_ms=overrun, event_median_ms=event_median, disturbed_calls=disturbed,
                                span_median_ms=span_median)
        # The diagnosis of work outside the given stream: the worker's clock saw far more than the
        # stream's events. (The time reported is the worker's either way.) Only calls in which neither end
        # waited for a CPU are evidence: a wait shows as the same gap. A candidate that makes its runner
        # wait on purpose can hide at most a tenth of its calls this way (more is CpuBusy, no time at all),
        # and their time still counts in the median reported.
        clean = [c for c in calls if not c["disturbed"]]
        trusted = statistics.median(c["wall_ms"] for c in clean)
        # 0.35 ms: what the two-process path adds to an honest call beyond its events on an H200 (0.07 to
        # 0.3 ms, growing with the kernel's footprint: benchmarks/results.md).
        if event_median is not None and trusted > 1.5 * event_median + HIDDEN_WORK_SLACK_MS:
            raise Stop("hidden_work", f"each call took {trusted:.3f} ms by the worker's clock but the given stream's "
                                      f"events saw only {event_median:.3f} ms: work runs outside the given stream, or "
                                      "after the call returned")
        overran = sum(1 for c in clean if c["overrun_ms"] > 0.5)
        if overran > max(2, len(clean) // 10):
            raise Stop("hidden_work", f"in {overran} of {len(clean)} timed calls the GPU was still busy with the kernel's work "
                                      "after the call had returned (the worker's probe waited over 0.5 ms): launch every "
                                      "kernel on the given stream and return only when it is queued")
        # Host computing: the runner's CPU time inside a call beyond what launching takes (cpu_time.py). Every
        # call counts -- waiting for a CPU only lowers a process's CPU time, never raises it.
        if self.host_cpu == "checked":
            busy = [c for c in calls if c["host_busy"]]
            self.record.time["host_busy_calls"] = len(busy)
            if cpu_time.too_many(len(busy), len(calls)):
                raise Stop("host_compute", cpu_time.host_compute_message(
                    len(busy), len(calls), [c["runner_cpu_ms"] for c in busy],
                    [c["wall_ms"] for c in busy]))


def workspace_too_big(requested: int, cap: int, why: str) -> Stop:
    """A workspace over its cap is refused, as a size of 0 is: at another shape than the problem's (generalize.py)
    the shape is then not verified, as if the kernel had declined it."""
    return Stop("load_failed", f"cutegen_workspace_bytes asks for {memory.describe_bytes(requested)} of workspace "
                               f"but the cap is {memory.describe_bytes(cap)} ({why}): use less scratch memory",
                refused=True)


def _workspace_request(ready: dict):
    """The workspace size in a load reply: None for a kernel without one (`workspace_bytes` null or
    absent), else a positive number of bytes. The runner is hostile once loaded, so anything else ends
    the session."""
    n = ready.get("workspace_bytes")
    if n is None:
        return None
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise Stop("load_failed", f"the runner reported a workspace size of {n!r}, which is not a number of bytes")
    if n == 0:
        raise Stop("load_failed", "cutegen_workspace_bytes returned 0: a kernel that needs no workspace defines "
                                  "cutegen_forward instead (or the shapes are not the ones the kernel was written for)",
                   refused=True)
    return n


def _reason(reports: list, agree: bool, mutated: list) -> str:
    """The first failure in the order a diagnosis should read them."""
    if any(r["unwritten_count"] for r in reports):
        return "unwritten"
    if not all(r["pass"] for r in reports):
        return "mismatch"
    if not agree:
        return "nondeterministic"
    if mutated:
        return "input_mutated"
    return "ok"


SANDBOX_ENV = "CUTEGEN_RUNNER_SANDBOX"
# How much of its sandbox the runner applies (src/run/runner_job.h). `full` is the default; the others
# exist to find out, on a machine where CUDA fails inside the sandbox, which part it trips on.
SANDBOX_SETTINGS = {
    # Own /proc entries only, the GPU's /dev nodes only, no capabilities once the candidate is loaded
    # (src/run/runner_job.h); validated on an H200 on 2026-11-30.
    "full": {"files": True, "syscalls": True, "deny_threads": True, "narrow": True},
    # The same with all of /proc readable and all of /dev writable, as before that validation.
    "wide": {"files": True, "syscalls": True, "deny_threads": True, "narrow": False},
    "threads": {"files": True, "syscalls": True, "deny_threads": False},
    "syscalls-only": {"files": False, "syscalls": True, "deny_threads": True},
    "files-only": {"files": True, "syscalls": False, "deny_threads": False},
    "off": {"files": False, "syscalls": False, "deny_threads": False},
}


def sandbox_settings() -> dict:
    name = os.environ.get(SANDBOX_ENV, "full")
    if name not in SANDBOX_SETTINGS:
        raise RequestError(f"{SANDBOX_ENV}={name!r} is not one of {', '.join(SANDBOX_SETTINGS)}")
    return SANDBOX_SETTINGS[name]


def default_link(plan: Plan, slot: Slot, problem=None):
    """The real runner: cutegen-runner --serve with a session file in a private directory. (`problem`, the
    problem instance the slot was made for, is for the test hooks' fake runner.)"""
    import json
    import tempfile
    os.makedirs(plan.work_dir, exist_ok=True)
    private = tempfile.mkdtemp(prefix="runner-", dir=plan.work_dir)
    session_file = os.path.join(private, "session.json")
    device = slot.arena.device
    with open(session_file, "w", encoding="utf-8") as f:
        json.dump(dict(slot.session_refs(), library=plan.library, sandbox=sandbox_settings(), wait=runner_wait(),
                       device=device.index if device.index is not None else 0, private_dir=private), f)
    return runner_link.SubprocessRunner(plan.runner + ["--serve", session_file], private,
                                        runner_link.runner_environment(private), plan.call_timeout_s)
