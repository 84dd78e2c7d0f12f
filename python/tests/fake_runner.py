"""A runner played inside the worker, for tests without a GPU (`fake_runner` in `evaluate_candidate`).

Test code, kept out of the worker package: the tests install it into a session (`install`, which the
in-process worker of conftest.py and the worker process started through fake_runner_worker.py call);
a production worker has nothing installed and refuses the field (session.py, `fake_links`). The fake writes into the slot's shared output buffers what a kernel of some behaviour would
write, so everything the supervisor does -- staging, checks, audits at secret positions, timing on
its own clock, verdicts -- runs for real. Spec: {"mode": ..., "after": N (calls before that are
honest), "only": [call indices] (the mode on these calls alone, honest on the others), "ms": host
milliseconds per call, "event_ms": the event time it claims, "rc": ...,
"fraction": ..., "sets": [output sets to write; others stay poisoned]}. Modes:

reference      the reference, cast to the output dtype (an exact kernel)
native         PyTorch's own result in the problem's dtype (an honest fp32 kernel)
tf32           the problem computed on TF32-rounded inputs and parameters
positive_tf32  tf32 when every floating input is >= 0, else native (precision that adapts to inputs)
zeros / none   zeros / nothing at all (the poison stays)
nan            a NaN of its own everywhere (not the poison's bits): work skipped, outputs written
partial        the reference, then the poison put back on the first `fraction` of the elements
identity       input 0 copied to the output
perturb        the reference plus `delta` (or `deltas`[output set]) at `flat_index`
zero_output    the reference, output `output` zeroed
mutate_param   the reference, then (after a trial's second run) parameter `index`'s first element changed
stale          the previous call's answer
own_params     computed with the problem's own parameters, whatever the slot holds
mutate_input   the reference, then (after a trial's second run) input 0's first element changed
unwritten_true the reference, then the poison put back wherever a bool output's answer is True (a kernel
               that writes only the False elements: the old bool poison read as True)
cached_ints    computes with the integer and bool inputs it saw at its first call, whatever the slot holds
               now (a kernel that caches what it derives from an index tensor)
print          the reference, and a line on its stdout
wrong_when_large  the reference, but zeros when some floating input holds a value of magnitude over 50 (right on
               the problem's and signed inputs, wrong on the scaled trial's: an overflow at large magnitudes)
rc / cuda_error  a failing return code / a CUDA error reply
crash / hang / tamper / forbidden  the session ends as the real link would report it
load_fail      the library cannot be loaded
workspace_stale  a kernel with a workspace that carries state across calls in it: the first call of a
               runner computes the reference and keeps it in the workspace, later calls output
               fmax(kept value, 0) without computing (attacks/every_call_checked/ws_stale_relu.cu does the same
               on a GPU)
"cpu_ms" is the runner CPU time the link reports for each call (all of them, or the call indices in
"cpu_calls"; 0 otherwise), and the fake sleeps that long so the call's wall time is at least that: a kernel
whose host computes (cpu_time.py); "cpu_unreadable" reports none at all (a kernel without process CPU clocks);
"wait_share" is the CPU share of the time waited a long calibration ping reports (default 0.1).
"wait_ms" makes the CPU look busy: the link reports that much more waiting for a CPU during each call
(all of them, or the call indices in "wait_calls"), "wait_ping_ms" during each calibration ping.
"meddle" makes the first call change the worker itself, as a runner that escaped its sandbox could:
"nofile" lowers its open-file soft limit by one, "affinity" pins it to its first CPU (own_state.py must
notice; the test puts the value back).
"other_shapes" says what the fake does at a shape other than the loaded problem's (a generalization trial;
OTHER_SHAPES lists the choices): a kernel that hard-codes its benchmark's shape, or refuses other shapes.
"workspace_bytes" makes the fake a kernel with a workspace: the size its load reports (a list: one
per runner started, for a size that changes; "per_output_element": 4 bytes per output element, a size
that follows the shapes). Every call of a fake with a workspace appends to
WORKSPACE_SEEN whether the workspace held nothing but the worker's poison when the call began, and which.
"""
import copy
import os
import resource
import sys
import time

import torch

from cutegen_worker import problem_loader
from cutegen_worker.buffers import poison_
from cutegen_worker.errors import RequestError
from cutegen_worker.runner_link import Exchange, LinkError, RunnerEnd

# What the fake does at shapes other than the benchmark's (generalization trials), whatever its mode there:
# "same" (behave as at the benchmark's), "wrong" (a hard-coded shape: one element off), "refuse" (return
# CUTEGEN_ERROR_UNSUPPORTED), "no_workspace" (a load that asks for a workspace of 0 bytes: the size function's
# refusal), "crash" (SIGSEGV), "print" (a line on stdout, the right values).
OTHER_SHAPES = ("same", "wrong", "refuse", "no_workspace", "crash", "print")
MODES = ("reference", "native", "tf32", "positive_tf32", "zeros", "nan", "none", "partial", "stale", "own_params",
         "identity", "perturb", "zero_output", "mutate_input", "mutate_param", "print", "rc", "cuda_error", "crash",
         "hang", "tamper", "forbidden", "load_fail", "workspace_stale", "unwritten_true", "cached_ints", "noisy",
         "wrong_when_large")
WORKSPACE_SEEN = []  # (runner index, call index, poisoned, the fill's pattern) per call of a fake with a workspace; tests read it


def round_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """float32 with the mantissa rounded to TF32's 10 bits (round to nearest, ties away, like cvt.rna)."""
    bits = x.contiguous().view(torch.int32)
    rounded = (bits + 0x1000) & -0x2000  # -0x2000 == 0xFFFFE000 as int32
    return rounded.view(torch.float32).reshape(x.shape)


def _tf32(v):
    return round_to_tf32(v) if isinstance(v, torch.Tensor) and v.dtype == torch.float32 else v


def install(session) -> None:
    """Lets `session` take `fake_runner` specs: the worker's hook point (Session.fake_links)."""
    # fake_link_factory is looked up at each call, so a test may wrap it (test_generalize.py).
    session.fake_links = lambda spec: fake_link_factory(session, spec)


def watch_runners(monkeypatch, note) -> None:
    """Calls note(plan, slot, problem) for every fake runner made from now on, as it is made (what a real runner's
    session file would be written from)."""
    factory = fake_link_factory

    def watching(session, spec):
        make = factory(session, spec)

        def made(plan, slot, problem=None):
            note(plan, slot, problem)
            return make(plan, slot, problem)
        return made
    monkeypatch.setattr(sys.modules[__name__], "fake_link_factory", watching)  # install() looks it up at each call


def fake_link_factory(session, spec):
    if not isinstance(spec, dict) or spec.get("mode") not in MODES:
        raise RequestError(f"fake_runner needs a mode, one of {', '.join(MODES)}")
    if spec.get("other_shapes", "same") not in OTHER_SHAPES:
        raise RequestError(f"fake_runner: other_shapes must be one of {', '.join(OTHER_SHAPES)}")
    started = []  # one entry per runner: the candidate session starts a second for a workspace
    benchmark = session.problem  # the problem as loaded: its shapes are "the benchmark's"

    def make(plan, slot, problem=None):
        started.append(slot)
        return FakeRunner(problem or session.problem, slot, spec, index=len(started) - 1, benchmark=benchmark)
    return make


class FakeRunner:
    pid = None  # played inside the worker: no process of its own on the GPU

    def __init__(self, problem, slot, spec: dict, index: int = 0, benchmark=None):
        self.problem, self.slot, self.spec, self.index = problem, slot, spec, index
        # At a shape other than the benchmark's (a generalization trial), the spec's other_shapes behaviour.
        own = benchmark is None or [tuple(o.shape) for o in slot.outputs[0]] == list(benchmark.output_shapes)
        self.elsewhere = "same" if own else spec.get("other_shapes", "same")
        self.mode, self.after = spec["mode"], spec.get("after", 0)
        self.calls = 0
        self.printed_text = ""
        self.previous = None
        self.ended = None
        self.waited_ns = 0  # what wait_ns() reports: only the spec's, never this machine's real load
        self.first_exact = None  # cached_ints: the integer and bool inputs of the first call

    # ---- the link's interface -----------------------------------------------------------------
    def start(self) -> dict:
        return {"setup": True}

    def wait_ns(self):
        return self.waited_ns

    def ping(self, sweep: bool = False, repeat: int = 1) -> Exchange:
        t0 = time.perf_counter_ns()
        self.waited_ns += int(self.spec.get("wait_ping_ms", 0) * 1e6)
        if repeat > 1:
            time.sleep(0.001)  # a long ping: its wait's CPU share is the spec's
        wall = time.perf_counter_ns() - t0
        cpu = int(self.spec.get("wait_share", 0.1) * wall) if repeat > 1 else 0
        return Exchange(reply={"pong": True, "event_ms": 0.0}, wall_ns=wall,
                        runner_cpu_ns=None if self.spec.get("cpu_unreadable") else cpu)

    def load(self, scalars: list) -> Exchange:
        if self.elsewhere == "no_workspace":
            return Exchange(reply={"ready": True, "workspace_bytes": 0}, wall_ns=0)
        if self.mode == "load_fail":
            return Exchange(reply={"ready": False, "failure": "load", "message": "cannot load kernel.so: bad ELF"}, wall_ns=0)
        reply = {"ready": True, "workspace_bytes": None}
        if "workspace_bytes" in self.spec:
            size = self.spec["workspace_bytes"]
            if size == "per_output_element":  # as a GEMM's packed copies: the size follows the shapes
                size = 4 * sum(o.numel() for o in self.slot.outputs[0])
            reply["workspace_bytes"] = size[min(self.index, len(size) - 1)] if isinstance(size, list) else size
        # As the real runner: the size is reported whatever the slot mapped (the worker compares), and a call is
        # refused below while the mapped workspace is short of it.
        self.asked_workspace = reply["workspace_bytes"] or 0
        return Exchange(reply=reply, wall_ns=0)

    def printed(self) -> str:
        return f"the kernel printed {len(self.printed_text)} bytes (first line: \"{self.printed_text}\")" \
            if self.printed_text else ""

    def close(self) -> RunnerEnd:
        self.ended = self.ended or RunnerEnd(exit_code=0)
        return self.ended

    def kill(self) -> RunnerEnd:
        return self.close()

    def ask_to_quit(self):
        self.asked_to_quit = True

    def call(self, output_set: int, scalars: list) -> Exchange:
        t0 = time.perf_counter_ns()
        only = self.spec.get("only")
        mode = self.mode if self.calls >= self.after and (only is None or self.calls in only) else "reference"
        if self.spec.get("wait_calls") is None or self.calls in self.spec["wait_calls"]:
            self.waited_ns += int(self.spec.get("wait_ms", 0) * 1e6)
        cpu_ms = self.spec.get("cpu_ms", 0) if self.spec.get("cpu_calls") is None or self.calls in self.spec["cpu_calls"] \
            else 0
        cpu_ns = None if self.spec.get("cpu_unreadable") else int(cpu_ms * 1e6)
        if self.calls == 0 and "meddle" in self.spec:
            _meddle(self.spec["meddle"])
        self.calls += 1
        reply = {"rc": 0, "cuda_error": None}
        if self.elsewhere == "refuse":
            return Exchange(reply=dict(reply, rc=1001), wall_ns=time.perf_counter_ns() - t0, runner_cpu_ns=cpu_ns)
        if self.elsewhere == "crash":
            self.ended = RunnerEnd(signal=11)
            raise LinkError("died", "the runner process killed by SIGSEGV during the call", self.ended)
        if self.elsewhere == "print":
            self.printed_text = "shape?"
        if self.elsewhere == "wrong":
            mode = "perturb"  # the reference, one element off: right at the benchmark's shape only
        workspace = self.slot.workspace
        if "workspace_bytes" in self.spec:
            mapped = 0 if workspace is None else workspace.numel() * workspace.element_size()
            if mapped < getattr(self, "asked_workspace", 0):  # the real runner refuses such a call too
                return Exchange(reply={"error": f"the kernel asks for {self.asked_workspace} bytes of workspace but "
                                                f"the harness's buffer holds {mapped}"}, wall_ns=0)
            words = workspace.view(torch.int32)
            pattern = self.slot.workspace_pattern
            signed = pattern - (1 << 32) if pattern >= 1 << 31 else pattern
            WORKSPACE_SEEN.append((self.index, self.calls - 1, bool((words == signed).all()), pattern))
        if mode == "workspace_stale":
            self._stale_workspace(self.slot.outputs[output_set], scalars, first=self.calls == 1)
            return Exchange(reply=dict(reply, event_ms=self.spec.get("event_ms")), wall_ns=time.perf_counter_ns() - t0,
                            runner_cpu_ns=cpu_ns)
        if mode == "crash":
            self.ended = RunnerEnd(signal=11)
            raise LinkError("died", "the runner process killed by SIGSEGV during the call", self.ended)
        if mode == "hang":
            self.ended = RunnerEnd(timed_out=True)
            raise LinkError("timeout", "no answer in time", self.ended)
        if mode == "tamper":
            raise LinkError("tampering", "the runner process answered a call with 'done', which does not answer it",
                            RunnerEnd(signal=9))
        if mode == "forbidden":
            self.ended = RunnerEnd(exit_code=97)
            raise LinkError("forbidden_call", "the sandbox stopped the runner during the call: socket", self.ended)
        if mode == "rc":
            reply["rc"] = self.spec.get("rc", 1000)
        elif mode == "cuda_error":
            reply["cuda_error"] = "cudaErrorIllegalAddress: an illegal memory access was encountered"
        elif output_set in self.spec.get("sets", (0, 1)):
            self._write(mode, self.slot.outputs[output_set], scalars, output_set)
        if torch.cuda.is_available() and any(o.is_cuda for o in self.slot.outputs[output_set]):
            # The real runner replies only after synchronising its stream and the device (runner_main.cpp,
            # call_once); a fake that replied with its torch work still queued would be hidden work.
            torch.cuda.synchronize()
        if self.spec.get("ms") or cpu_ms:
            time.sleep((self.spec.get("ms", 0) + cpu_ms) / 1000)
        wall = time.perf_counter_ns() - t0
        # What it claims its events saw: only when told (its own work is not timed on a stream).
        reply["event_ms"] = self.spec.get("event_ms")
        return Exchange(reply=reply, wall_ns=wall, runner_cpu_ns=cpu_ns)

    # ---- what a kernel of each behaviour writes -----------------------------------------------------
    def _stale_workspace(self, outputs: list, scalars: list, first: bool) -> None:
        kept = self.slot.workspace.view(torch.float32)
        with torch.no_grad():
            if first:
                answer = self.problem.reference.compute(self._inputs(scalars), list(self.slot.params))
                flat = torch.cat([a.reshape(-1).to(torch.float32) for a in answer])
                kept[:flat.numel()].copy_(flat)
            at = 0
            for out in outputs:
                n = out.numel()
                out.copy_(torch.fmax(kept[at:at + n], torch.zeros(n, device=kept.device)).reshape(out.shape).to(out.dtype))
                at += n

    def _inputs(self, scalars: list) -> list:
        return [t if t is not None else s["value"] for t, s in zip(self.slot.inputs, scalars)]

    def _write(self, mode: str, outputs: list, scalars: list, output_set: int) -> None:
        values, params = self._inputs(scalars), list(self.slot.params)
        problem = self.problem
        if mode in ("none",):
            return
        if mode in ("zeros", "nan", "identity"):
            with torch.no_grad():
                for o in outputs:
                    if mode == "identity":
                        o.copy_(values[0].reshape(o.shape).to(o.dtype))
                    else:
                        o.fill_(0.0 if mode == "zeros" else float("nan"))
            return
        if mode == "stale":
            answer = self.previous
            self.previous = problem.reference.compute(values, params)
            if answer is None:
                answer = self.previous
        elif mode == "native":
            answer = problem.reference.native(values, params)
        elif mode == "own_params":
            answer = problem.reference.compute(values, None)
        elif mode == "cached_ints":
            exact = [v.clone() if isinstance(v, torch.Tensor) and not v.is_floating_point() else None for v in values]
            self.first_exact = self.first_exact or exact
            answer = problem.reference.compute([c if c is not None else v for v, c in zip(values, self.first_exact)],
                                               params)
        elif mode in ("tf32", "positive_tf32"):
            positive = all(not (isinstance(v, torch.Tensor) and v.is_floating_point() and bool((v < 0).any()))
                           for v in values)
            if mode == "tf32" or positive:
                model = copy.deepcopy(problem.model)
                _set_params(model, [_tf32(p) for p in params])
                answer = problem_loader.run_forward(model, [_tf32(v) for v in values], problem.path)
            else:
                answer = problem.reference.native(values, params)
        else:
            answer = problem.reference.compute(values, params)
        with torch.no_grad():
            for out, value in zip(outputs, answer):
                if value.numel() == out.numel():  # another shape is the problem's fault; the check says so
                    out.copy_(value.reshape(out.shape).to(device=out.device, dtype=out.dtype))
            if mode == "partial":
                for out in outputs:
                    n = max(1, int(out.numel() * self.spec.get("fraction", 0.5)))
                    poison_(out.view(-1)[:n], self.slot.output_patterns[output_set])
            elif mode == "perturb":
                delta = self.spec.get("deltas", [self.spec.get("delta", 1.0)] * 2)[output_set]
                outputs[0].view(-1)[self.spec.get("flat_index", 0)] += delta
            elif mode == "noisy":  # the reference with a relative error of about spec["noise"] per element
                g = torch.Generator().manual_seed(self.calls)
                for out in outputs:
                    if out.is_floating_point():
                        noise = torch.randn(out.shape, generator=g, dtype=torch.float64) * self.spec["noise"]
                        out.copy_((out.to(torch.float64) * (1 + noise.to(out.device))).to(out.dtype))
            elif mode == "zero_output":
                outputs[self.spec.get("output", 0)].zero_()
            elif mode == "unwritten_true":
                for out in outputs:
                    if out.dtype == torch.bool:
                        true = out.clone()
                        poisoned = poison_(torch.empty_like(out), self.slot.output_patterns[output_set])
                        out.view(torch.uint8)[true] = poisoned.view(torch.uint8)[true]
            elif mode == "mutate_input" and outputs is self.slot.outputs[-1]:
                self.slot.inputs[0].view(-1)[0] += 1.0  # after its last run on these inputs: the outputs stay right
            elif mode == "mutate_param" and outputs is self.slot.outputs[-1]:
                self.slot.params[self.spec.get("index", 0)].view(-1)[0] += 1.0
            elif mode == "print":
                self.printed_text = "hello from the kernel"
            elif mode == "wrong_when_large" and any(isinstance(v, torch.Tensor) and v.is_floating_point()
                                                    and bool((v.abs() > 50).any()) for v in values):
                for out in outputs:
                    out.zero_()


def _meddle(what: str) -> None:
    pid = os.getpid()  # the worker: what a hostile runner would name
    if what == "nofile":
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft - 1, hard))
    elif what == "affinity":
        os.sched_setaffinity(pid, {min(os.sched_getaffinity(pid))})
    else:
        raise RequestError(f"fake_runner: meddle {what!r} is not nofile or affinity")


def _set_params(model, params: list) -> None:
    """Loads `params` into `model` (parameters then buffers)."""
    state = [t for _, t in model.named_parameters()] + [t for _, t in model.named_buffers()]
    with torch.no_grad():
        for t, v in zip(state, params):
            t.copy_(v)
