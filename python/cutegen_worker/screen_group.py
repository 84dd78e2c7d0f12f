"""`screen_candidates`: several candidates of one problem ranked in one session (the loop's --candidates).

A screening only ranks: the candidate it chooses is judged again in full, in a session of its own
(candidate_session.py). Screened one after the other, each candidate paid a whole session -- a runner,
its calibration, a trial, twenty-odd calls each staging a fresh set -- and at KernelBench's sizes,
where staging one call's set takes 10-20 ms, four screens were more than half of a one-candidate step
(benchmarks/results.md). Here the candidates share what does not depend on them:
* one slot of shared buffers, mapped by one runner per candidate (each its own sandboxed process, so no
  candidate's code runs in another's process or the worker's), all started at once. A kernel with a
  workspace (the judge says which export the pair) first tells its size to a runner of its own, as in a
  session; its workspace is then an allocation of its own, mapped by its runner alone and made the slot's
  for its calls;
* one calibration, by the first runner before any candidate is loaded (the runners are the same program,
  and none has loaded a candidate yet, so none can sway it), used for all;
* each call's set, staged once: the candidates are called on it in turn, the order rotating from call to
  call, and before each one after the first the slot is restored (fresh poison in the outputs and the
  workspace, the inputs and parameters written again, L2 flushed), so none sees what another left;
* one check for other users of the GPU, before the loads and after the runners are gone.
Each candidate's calls are checked as a session's are (poison and inputs right after the call, every
timed call compared at fresh secret positions, the overrun, the host's CPU time, hidden work), except
that no timed call is checked in full: the group keeps no private copies of outputs, and the chosen
candidate's full evaluation checks two.

What one candidate can do to another here: leave work on the GPU that lands in the slot during another's
call (its own probe after the call charges it, and its own time shows it), or corrupt shared buffers
another reads. Either changes only a rank or makes another fail its screening, never a verdict: the
chosen kernel is judged again alone. A candidate that ends (a failed check, a crash) leaves the group;
the others go on. docs/judge.md, "Screening several candidates".
"""
import dataclasses
import time

from . import gpu_share, memory, runner_link
from .candidate_session import (TIMED_VERDICTS, CandidateSession, Phases, Plan, Stop, _Clock, _workspace_request,
                                workspace_too_big)
from .shared_buffers import SharedArena
from .staging import Slot

# Candidates one group may hold: each is a runner process with its own CUDA context on the GPU.
MAX_CANDIDATES = 8


class ScreenGroup:
    def __init__(self, problem, plan: Plan, libraries: list, make_links: list, workspaces: list = None):
        """`make_links`: one link factory per library (the real runner's, or a test's fake). `workspaces`: per library,
        whether it exports the workspace pair (the judge's reading; a hint, as Plan.expects_workspace is)."""
        self.problem, self.plan = problem, plan
        self.phase_seconds = {}
        self.phases = Phases(self.phase_seconds)
        self.arena = SharedArena(problem.device)
        self.slot = Slot(self.arena, problem)
        self.clock = _Clock(problem.device)
        self.share = gpu_share.for_device(problem.device, idle_window=False)
        self.candidates = [CandidateSession(problem, dataclasses.replace(plan, library=library), make, group=self)
                           for library, make in zip(libraries, make_links)]
        self.live = list(self.candidates)
        self.calibrated_by = None
        self.timed_since_us = None  # when the timed calls began, on NVML's clock (gpu_share)
        hints = workspaces or [False] * len(self.candidates)
        self.hinted = [c for c, hint in zip(self.candidates, hints) if hint]
        self.workspace_of = {}  # id(candidate) -> its workspace allocation

    def run(self) -> dict:
        try:
            try:
                if self.hinted:
                    with self.phases("workspace_sizing"):
                        self._size_workspaces()
                with self.phases("runner_start"):
                    # Every runner is started before any is waited for: their CUDA contexts and mappings are made
                    # side by side.
                    for c in list(self.live):
                        self._use(c)  # its workspace, if it has one, is in the session its runner maps
                        self._guarded(c, lambda c=c: self._spawn(c))
                    self._use(None)
                    for c in list(self.live):
                        self._guarded(c, lambda c=c: self._set_up(c))
                with self.phases("calibration"):
                    self._calibrate()
                with self.phases("load"):
                    for c in list(self.live):
                        self._guarded(c, lambda c=c: self._load(c))
                with self.phases("trials"):
                    self._trials()
                self._timed_calls()
                with self.phases("runner_end"):
                    for c in self.live:
                        c.link.ask_to_quit()  # all first: they exit side by side
                    for c in list(self.live):
                        self._guarded(c, lambda c=c: self._end(c))
            finally:
                for c in self.candidates:
                    if c.link is not None and "end" not in c.record.runner:
                        c.record.runner["end"] = c.link.kill().describe()
            self._check_share_after()
        finally:
            for c in self.candidates:
                c.link = c.slot = c.secret_out = c.secret_in = None
            self.slot = None
            self.arena.release()
        records = []
        for index, c in enumerate(self.candidates):
            record = c.record.to_dict()
            record["screening_group"] = {"candidates": len(self.candidates), "index": index,
                                         "calibrated_by": self.calibrated_by}
            records.append(record)
        return {"records": records, "phase_seconds": {k: round(v, 6) for k, v in self.phase_seconds.items()}}

    # ---- one candidate's steps, any of which may end it ---------------------------------------------
    def _guarded(self, candidate: CandidateSession, step):
        """Runs `step` of `candidate`; when the step ends the candidate (a Stop, or its runner's link failing), its
        record says why, its runner is killed, and it leaves the group. Whatever else is raised ends the whole
        request (the problem's errors, the machine's, the worker's)."""
        try:
            step()
            return
        except Stop as stop:
            ended = stop
        except runner_link.LinkError as exc:
            ended = candidate._stop_for_link(exc)
        r = candidate.record
        r.verdict, r.reason, r.failed_check, r.refused = ended.verdict, ended.reason, ended.failed_check, ended.refused
        if "end" not in r.runner:
            r.runner["end"] = candidate.link.kill().describe()
        self.live.remove(candidate)

    def _spawn(self, c: CandidateSession):
        with c.phases("runner_start"):
            c.link = c.make_link(c.plan, self.slot, self.problem)

    @staticmethod
    def _set_up(c: CandidateSession):
        with c.phases("runner_start"):
            c._set_up_runner()

    def _load(self, c: CandidateSession):
        with c.phases("runner_start"):
            ready = c._load_kernel()
        asked = _workspace_request(ready)
        sized = c.record.workspace["bytes"] if c.record.workspace else None
        if asked != sized:
            raise Stop("load_failed", f"cutegen_workspace_bytes asked for {sized} bytes when its size was asked and "
                                      f"{asked} at this load: the size may depend only on the shapes and dtypes")

    def _use(self, c):
        """Makes `c`'s workspace the slot's (none: `c` has none, or is None), so that staging and restoring poison
        it and its calls are given it."""
        self.slot.workspace = self.workspace_of.get(id(c)) if c is not None else None

    def _size_workspaces(self):
        """Each kernel the judge said has a workspace loads in a runner of its own that only asks the size (not
        calibrated, as in a session); its workspace is allocated, and its runner in the group maps it. The sizing
        runners start, load and exit side by side."""
        self._use(None)
        sizes = {}  # id(candidate) -> the size it asked for
        for c in [c for c in self.hinted if c in self.live]:
            self._guarded(c, lambda c=c: self._spawn(c))
        for c in [c for c in self.hinted if c in self.live]:
            self._guarded(c, lambda c=c: self._ask_size(c, sizes))
        for c in [c for c in self.hinted if c in self.live]:
            c.link.ask_to_quit()
        for c in [c for c in self.hinted if c in self.live]:
            self._guarded(c, lambda c=c: self._sized(c, sizes.get(id(c))))

    def _ask_size(self, c: CandidateSession, sizes: dict):
        """The size the kernel asks for (None: none, the hint was wrong), within its cap less what the others in
        `sizes` asked."""
        with c.phases("runner_start"):
            c._set_up_runner()
            requested = _workspace_request(c._load_kernel())
        if requested is None:
            return None
        cap, why = memory.workspace_cap(self.problem.metadata["memory"], self.problem.device, slot_allocated=True,
                                        copies="none")
        cap = max(0, cap - sum(sizes.values()))  # the sizes the others asked, allocated after the sizing runners exit
        if requested > cap:
            raise workspace_too_big(requested, cap, why)
        c.record.workspace = {"bytes": requested, "cap_bytes": cap}
        sizes[id(c)] = requested
        return requested

    def _sized(self, c: CandidateSession, requested):
        """The sizing runner gone, the kernel's workspace allocated (a wrong hint: its group runner has none)."""
        with c.phases("runner_start"):
            if requested is None:
                c._next_runner("giving the kernel its runner in the group", "the runner that was to ask the workspace size")
                return
            c._next_runner("handing the workspace to a fresh runner", "the runner that asked the workspace size")
            self.workspace_of[id(c)] = self.slot.new_workspace(requested)

    @staticmethod
    def _end(c: CandidateSession):
        c.phase = "ending the runner"
        c._end_runner()

    # ---- the group's steps ----------------------------------------------------------------------------
    def _calibrate(self):
        """The first runner that calibrates does so for all, before any candidate is loaded."""
        leader = None
        for c in list(self.live):
            c.phase = "calibration (before the kernels were loaded)"
            self._guarded(c, c._calibrate)
            if c in self.live:
                leader = c
                break
        if leader is None:
            return
        self.calibrated_by = self.candidates.index(leader)
        leader.record.runner["calibrated"] = True
        for c in self.live:
            if c is not leader:
                c.record.runner["calibrated"] = False
                for name in ("overrun_check", "host_cpu", "wait_share", "staging_ns", "ping_ns", "probe_limit_ns",
                             "gather_limit_ns", "post_limit_ns", "span_overhead_ns"):
                    setattr(c, name, getattr(leader, name))
                c.record.calibration = dict(leader.record.calibration, by_candidate=self.calibrated_by)
        if self.share is not None and self.plan.runs > 0:
            # Every runner has run only the harness's code so far: the judge launches nothing while the GPU's
            # utilisation is sampled.
            self.clock.sync()
            self.share.check("checked before the kernels were loaded", self._pids())

    def _trials(self):
        for index, spec in enumerate(self.plan.trials):
            order = list(self.live)
            if not order:
                return
            self._use(order[0])
            staged = self.slot.stage(self.problem, spec)
            expected = {}  # the reference and PyTorch's result, computed once for all the candidates' checks
            for n, c in enumerate(order):
                if n:
                    self._use(c)
                    self.slot.restore(staged)
                self._guarded(c, lambda c=c: self._trial(c, index, staged, expected))
            staged = expected = None

    @staticmethod
    def _trial(c: CandidateSession, index: int, staged, expected: dict):
        with c.phases("trials"):
            report = c._trial(index, staged, expected)
        if not report["pass"]:
            raise c._failed(report, f"trial {index} ({staged.spec.kind} inputs) failed")
        c.previous = staged.spec

    def _timed_calls(self):
        if not self.live:
            return
        first, count = self.live[0], len(self.live)
        plans = {id(first): first._timed_begin(candidates=count)}
        if plans[id(first)] is None:
            return
        kinds = plans[id(first)].kinds
        for c in self.live[1:]:
            plans[id(c)] = c._timed_begin(kinds=kinds, candidates=count)
        self.timed_since_us = first.timed_since_us
        total = plans[id(first)].total
        for i in range(total):
            if not self.live:
                break
            staged = None
            spec = plans[id(first)].spec(i, first.sysrand)
            # The order turns from call to call, so no candidate is always the first after a staging.
            order = self.live[i % len(self.live):] + self.live[:i % len(self.live)]
            self._use(order[0])
            t0 = time.perf_counter_ns()
            staged = self.slot.stage(self.problem, spec, flush=self.clock.flush, output_sets=(0,))
            self.phases.add("timed_staging", time.perf_counter_ns() - t0)
            expected = {}  # PyTorch's result on this set, computed once for every candidate's comparison
            for n, c in enumerate(order):
                if n:
                    self._use(c)
                    t0 = time.perf_counter_ns()
                    self.slot.restore(staged, flush=self.clock.flush, output_sets=(0,))
                    self.phases.add("timed_restore", time.perf_counter_ns() - t0)
                c._draw_positions()
                self._guarded(c, lambda c=c: self._timed_call(c, plans[id(c)], i, staged, expected))
            staged = expected = None
        for c in list(self.live):
            self._guarded(c, lambda c=c: c._timed_end(plans[id(c)]))

    @staticmethod
    def _timed_call(c: CandidateSession, plan, i: int, staged, expected: dict):
        failed = c._timed_call(plan, i, staged, expected)
        if failed is not None:
            raise c._failed(*failed)

    def _pids(self) -> list:
        return [pid for c in self.candidates for pid in c.runner_pids]

    def _check_share_after(self):
        """As a session's (CandidateSession._check_share_after), for all the group's runners at once: they have
        all exited."""
        if self.share is None:
            return
        if self.timed_since_us is not None and any(c.record.verdict in TIMED_VERDICTS for c in self.candidates):
            self.share.check("checked after the timed calls, the runners gone", self._pids(), self.timed_since_us)
        record = self.share.record()
        for c in self.candidates:
            c.record.gpu_share = record
