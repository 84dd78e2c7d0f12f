"""The worker's state (one loaded problem) and the protocol's operations.

Each `op_*` method takes the request object and returns the `result` object, or raises a
WorkerError; protocol.py owns the wire format.

What lives where:
* shared with the runner (shared_buffers.SharedArena, one dedicated allocation each): the slot of
  one runner session (staging.py) -- forward inputs, a copy of the parameters and buffers, two
  output sets -- or the buffers of one profiling run;
* private to the worker (torch's allocator): the model, its upcast reference copy, the staged
  values of the call being checked, references, baseline inputs.
The candidate is judged by candidate_session.py (`evaluate_candidate`), the trusted supervisor of
the runner process.
"""
import gc
import hashlib
import os
import sys
from dataclasses import dataclass

import torch

from . import calibrate, candidate_session, compare, confinement, generalize, inputs, memory, memtrace, metadata, \
    op_graph, own_state, params as params_mod, problem_facts, problem_loader, screen_group, timing
from .buffers import describe
from .dtypes import dtype_name, problem_dtype
from .errors import ProblemError, RequestError
from .reference import Reference, disable_tf32
from .shared_buffers import SharedArena
from .staging import CallSpec, Slot


@dataclass
class LoadedProblem:
    path: str
    module: object
    model: torch.nn.Module
    device: torch.device
    file_sha256: str
    source: inputs.InputSource
    input_names: list
    param_names: list
    params: list  # the model's own parameters then buffers (the kernel contract's order); never shared
    param_snapshot: list  # their values at load, on the host: forward passes must not drift them
    output_shapes: list
    output_dtypes: list
    dtype: torch.dtype
    reference: Reference
    metadata: dict
    example_seed: int = 0


@dataclass
class Prepared:
    """Shared buffers kept between requests: those of the last profiling run."""
    arena: SharedArena
    slot: Slot


def _field(req: dict, name: str, kind, default=None, required=False):
    if name not in req:
        if required:
            raise RequestError(f"request field {name!r} is missing")
        return default
    value = req[name]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RequestError(f"request field {name!r} must be {kind.__name__}, got {type(value).__name__}")
    return value


def parse_device(name: str) -> torch.device:
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise RequestError(f"device {name!r} is not a torch device name; use cuda, cuda:N or cpu") from None
    if device.type not in ("cuda", "cpu"):
        raise RequestError(f"device {name!r} is not supported; use cuda, cuda:N or cpu")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ProblemError(
                f"CUDA was requested but torch {torch.__version__} sees no usable GPU "
                f"(torch built for CUDA {torch.version.cuda}); run on a GPU machine, or check the driver and "
                "CUDA_VISIBLE_DEVICES")
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        elif device.index >= torch.cuda.device_count():
            raise RequestError(f"device {name!r} does not exist; torch sees {torch.cuda.device_count()} GPUs")
        torch.cuda.set_device(device)
    return device


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Session:
    def __init__(self, deny_network: bool = False):
        disable_tf32()
        # The worker as cutegen starts it (protocol.main) imports problem files without the network
        # (confinement.py); tests that drive a Session in their own process leave it open.
        self.deny_network = deny_network
        self.network_denied = False
        self.problem = None
        self.prepared = None
        self.prepared_compile = None  # prepare_baselines' torch.compile result, for time_baselines
        # The shared buffers of the last evaluation, freed by the next request that allocates (release_prepared),
        # or by `free_buffers`, which the judge sends beside the next compile: freeing them took 0.2-0.3 s at
        # KernelBench sizes, and torch's cached blocks another 0.3-0.5, on the step's critical path.
        self.held_arenas = []
        # The hook point for tests without a GPU: spec -> link factory, set by python/tests/fake_runner.py's
        # install(); None in production, where a `fake_runner` field is refused.
        self.fake_links = None

    # ---- buffers ----------------------------------------------------------------------------
    def release_prepared(self) -> None:
        """Frees the shared buffers kept from the last request (and what torch caches) before new ones."""
        if self.prepared is not None:
            arena, self.prepared = self.prepared.arena, None
            arena.release()
        while self.held_arenas:
            self.held_arenas.pop().release()
        if torch.cuda.is_initialized():
            gc.collect()  # device tensors in reference cycles
            torch.cuda.empty_cache()  # cuMemAlloc needs memory torch's cache would otherwise keep

    # ---- load -------------------------------------------------------------------------------
    def op_load(self, req: dict) -> dict:
        path = _field(req, "problem", str, required=True)
        device = parse_device(_field(req, "device", str, "cuda"))
        seed = _field(req, "seed", int, 0)
        if self.problem is not None:
            sys.modules.pop(self.problem.module.__name__, None)  # module-level tensors go with it
        self.problem = None  # first, so release_prepared also frees the old problem's memory
        self.prepared_compile = None
        self.release_prepared()
        # After parse_device: CUDA is initialised before no_new_privs is set (confinement.py says why).
        if self.deny_network and not self.network_denied:
            confinement.deny_network()
            self.network_denied = True
        self.problem = self._load(os.path.abspath(path), device, seed)
        return self.problem.metadata

    def op_release_gpu(self, req: dict) -> dict:
        """Drops every device tensor this worker holds (the problem, the last request's buffers, the
        compiled baseline) and torch's cached blocks, keeping only the CUDA context: sent when cutegen
        hands a shared GPU to another task (cutegen bench), whose evaluation needs that memory. The
        next request that needs a problem must `load` it again."""
        if self.problem is not None:
            sys.modules.pop(self.problem.module.__name__, None)
        self.problem = None
        self.prepared_compile = None
        self.release_prepared()
        held = torch.cuda.memory_reserved() if torch.cuda.is_initialized() else 0
        return {"reserved_bytes": int(held)}

    def op_free_buffers(self, req: dict) -> dict:
        """Frees what the last requests left on the device (their shared buffers, torch's cached blocks) and keeps
        the problem: the judge sends it beside a candidate's compile, so the session after it starts on free
        memory without spending the time on it. Every request that allocates frees them first anyway."""
        self.release_prepared()
        held = torch.cuda.memory_reserved() if torch.cuda.is_initialized() else 0
        return {"reserved_bytes": int(held)}

    def instantiate(self, path: str, device: torch.device, seed: int, overrides: dict) -> LoadedProblem:
        """The problem built again with some of its module's globals set to other values: another configuration
        of it, loaded exactly as `load` loads the problem itself (generalize.py). The caller drops its module
        from sys.modules when done."""
        return self._load(path, device, seed, overrides)

    def _load(self, path: str, device: torch.device, seed: int, overrides: dict = None) -> LoadedProblem:
        module = problem_loader.import_problem(path)
        # Set before anything reads them: get_init_inputs(), Model and get_inputs() read globals when called.
        module.__dict__.update(overrides or {})
        model, init_inputs = problem_loader.build_model(module, path, device, seed)
        named = list(model.named_parameters()) + list(model.named_buffers())
        n_params = len(list(model.named_parameters()))
        params = [t.detach() for _, t in named]
        snapshot = [t.to("cpu", copy=True) for t in params]
        source = inputs.InputSource(module, path, device)
        values = source.first(seed)
        with metadata.OpRecorder() as recorder:
            outputs = problem_loader.run_forward(model, values, path)
        _restore(params, snapshot)
        input_names = problem_loader.forward_arg_names(model, len(values))
        _check_dtypes(path, [(f"input {n!r}", v) for n, v in zip(input_names, values)]
                      + [(f"parameter {n!r}", t) for (n, _), t in zip(named, params)]
                      + [(f"output {i}", o) for i, o in enumerate(outputs)])
        _refuse_random_forward(model, values, outputs, params, snapshot, path, seed)
        floating = [v.dtype for v in values + params + outputs if isinstance(v, torch.Tensor) and v.is_floating_point()]
        dtype = problem_dtype(floating or [o.dtype for o in outputs])
        reference = Reference(model, path, dtype, values)
        _restore(params, snapshot)
        workspace = self._measure_check_workspace(values, reference, outputs, device)
        staging = self._measure_staging(source, params, seed, device)
        meta = {
            "name": os.path.splitext(os.path.basename(path))[0],
            "inputs": [describe(v, n) for v, n in zip(values, input_names)],
            "params": [dict(describe(t, n), buffer=i >= n_params) for i, (n, t) in enumerate(named)],
            "outputs": [describe(o) for o in outputs],
            "init_inputs": problem_loader.describe_init_inputs(type(model), init_inputs),
            "aten_ops": metadata.aten_ops(recorder.ops),
            "workload_class": metadata.workload_class(recorder.ops),
            "flops": metadata.total_flops(recorder.ops),
            "min_bytes": metadata.min_bytes(values, params, outputs),
            "dtype": dtype_name(dtype),
            "reference_dtype": reference.dtype_name(dtype),
            "gpu": timing.device_name(device),
            "torch_version": torch.__version__,
            "memory": memory.estimates(values, params, outputs, workspace, device, staging),
        }
        memtrace.note_estimate(meta["memory"])
        if reference.note:
            meta["reference_note"] = reference.note
        if fixed := source.fixed_report(input_names):
            meta["fixed_inputs"] = fixed  # integer/bool inputs get_inputs() does not vary (inputs.py)
        with open(path, "rb") as f:
            file_sha256 = hashlib.sha256(f.read()).hexdigest()
        return LoadedProblem(
            path=path, module=module, model=model, device=device, file_sha256=file_sha256, source=source,
            input_names=input_names, param_names=[n for n, _ in named], params=params, param_snapshot=snapshot,
            output_shapes=[tuple(o.shape) for o in outputs], output_dtypes=[o.dtype for o in outputs],
            dtype=dtype, reference=reference, metadata=meta, example_seed=seed,
        )

    @staticmethod
    def _measure_check_workspace(values, reference, native_outputs, device) -> int:
        """Device memory one full check needs beyond the shared buffers, measured by doing its work
        once: the reference, PyTorch's own result, and comparing an output set against them."""
        with memory.PeakMeter(device) as meter:
            refs = reference.compute(values)
            natives = reference.native(values)
            for out, ref, native in zip(native_outputs, refs, natives):
                tol = compare.tolerance("strict", out.dtype, out.dtype)
                compare.compare(out, ref, tol, compare.max_abs_finite(ref))
            del refs, natives
        return meter.peak

    @staticmethod
    def _measure_staging(source, params, seed, device) -> int:
        """Device memory staging one call takes at its peak, the set made included, measured by making one:
        get_inputs() with whatever it allocates on the way, the signed transform (the kind that allocates the
        most: the input, its signs and the result side by side) and a parameter draw. 0 on the CPU, where
        nothing is measured (as for the check's workspace)."""
        if device.type != "cuda":
            return 0
        with memory.PeakMeter(device) as meter:
            made = source.generate(seed, "signed")
            drawn = params_mod.values_for(params, params_mod.RANDOM, seed)
            del made, drawn
        return meter.peak

    def need_problem(self) -> LoadedProblem:
        if self.problem is None:
            raise RequestError("no problem is loaded; send `load` first")
        return self.problem

    # ---- the seed path ----------------------------------------------------------------------
    def op_trace(self, req: dict) -> dict:
        """The problem's operator graph (op_graph.py); independent of `load`, and needs no GPU."""
        path = _field(req, "problem", str, required=True)
        return op_graph.trace(os.path.abspath(path))

    # ---- exports ----------------------------------------------------------------------------
    def op_describe(self, req: dict) -> dict:
        """The problem's arguments, parameters, outputs and constructor arguments, built on meta tensors
        (problem_facts.py); independent of `load`, and needs no GPU."""
        path = _field(req, "problem", str, required=True)
        return problem_facts.describe_problem(os.path.abspath(path))

    def op_prompt_facts(self, req: dict) -> dict:
        """What `load` reports of a problem that a prompt shows (`cutegen prompt`), built on meta tensors
        (problem_facts.py): no GPU, and not the problem's memory."""
        path = _field(req, "problem", str, required=True)
        return problem_facts.prompt_facts(os.path.abspath(path))

    # ---- the candidate ----------------------------------------------------------------------
    def op_evaluate_candidate(self, req: dict) -> dict:
        problem = self.need_problem()
        plan = candidate_session.Plan.parse(req)
        compare.tolerance(plan.precision, problem.dtype, problem.dtype)  # an unknown policy fails before any work
        make_link = candidate_session.default_link
        if "fake_runner" in req:
            if self.fake_links is None:
                raise RequestError("fake_runner is a test hook this worker does not have; tests start the worker "
                                   "through python/tests/fake_runner_worker.py")
            make_link = self.fake_links(req["fake_runner"])
        self.release_prepared()
        copies_on = memory.place_audit_copies(problem.path, problem.metadata["memory"], problem.device)
        # The candidate's runner must not have reached this process (own_state.py); checked whatever the
        # session's end, and fatal: the worker stops after answering.
        before = own_state.snapshot()
        try:
            record = candidate_session.CandidateSession(problem, plan, make_link, copies_on=copies_on,
                                                        hold_arena=self.held_arenas).run()
            if record["verdict"] == "pass":
                # Only a kernel right at the problem's own shape is tried at others (generalize.py), and
                # only one the loop could keep.
                if generalize.wanted(plan, record):
                    record["generalization"] = generalize.run(self, problem, plan, make_link, record)
                else:
                    record["generalization"] = generalize.skipped(problem, plan, record)
            return record
        finally:
            own_state.require_unchanged(before, "during the evaluation")

    def op_screen_candidates(self, req: dict) -> dict:
        """Several candidates ranked in one session (screen_group.py): `evaluate_candidate`'s fields with
        `libraries` (2 to screen_group.MAX_CANDIDATES) and `workspaces` (per library, whether it exports the
        workspace pair) in place of `library` and `workspace`; a screening, without other shapes. Answers one
        evaluate_candidate record per library, in order."""
        problem = self.need_problem()
        libraries = req.get("libraries")
        if (not isinstance(libraries, list) or not 2 <= len(libraries) <= screen_group.MAX_CANDIDATES
                or not all(isinstance(lib, str) for lib in libraries)):
            raise RequestError(f"screen_candidates: libraries must be a list of 2 to {screen_group.MAX_CANDIDATES} "
                               "paths")
        if "library" in req or "workspace" in req or "workspace_bytes" in req:
            raise RequestError("screen_candidates: takes libraries and workspaces, one entry per kernel (no library, "
                               "workspace or workspace_bytes field)")
        workspaces = req.get("workspaces", [False] * len(libraries))
        if (not isinstance(workspaces, list) or len(workspaces) != len(libraries)
                or not all(type(w) is bool for w in workspaces)):
            raise RequestError("screen_candidates: workspaces must be a list of true or false, one per library")
        plan = candidate_session.Plan.parse(dict(req, library=libraries[0]))
        if plan.generalize:
            raise RequestError("screen_candidates: a screening tries no other shapes; generalize must be 0")
        plan.screening = True
        compare.tolerance(plan.precision, problem.dtype, problem.dtype)
        makes = [candidate_session.default_link] * len(libraries)
        if "fake_runners" in req:
            specs = req["fake_runners"]
            if self.fake_links is None:
                raise RequestError("fake_runners is a test hook this worker does not have; tests start the worker "
                                   "through python/tests/fake_runner_worker.py")
            if not isinstance(specs, list) or len(specs) != len(libraries):
                raise RequestError("screen_candidates: fake_runners needs one spec per library")
            makes = [self.fake_links(spec) for spec in specs]
        self.release_prepared()
        # As many at once as the device's free memory holds runners for (each has its own context); the rest in
        # further groups, one after the other.
        estimate = problem.metadata["memory"]
        size = memory.runners_that_fit(estimate, problem.device, len(libraries))
        memory.check_fits(problem.path, estimate, problem.device, copies="none", runners=size)
        answer = {"records": [], "phase_seconds": {}, "groups": 0}
        before = own_state.snapshot()
        try:
            for at in range(0, len(libraries), size):
                part = slice(at, at + size)
                group = screen_group.ScreenGroup(problem, plan, libraries[part], makes[part], workspaces[part]).run()
                answer["records"] += group["records"]
                answer["groups"] += 1
                for phase, seconds in group["phase_seconds"].items():
                    answer["phase_seconds"][phase] = round(answer["phase_seconds"].get(phase, 0.0) + seconds, 6)
            return answer
        finally:
            own_state.require_unchanged(before, "during the screening")

    def op_prepare_profile(self, req: dict) -> dict:
        """Buffers for a profiling run (no checks): one problem-kind set with the problem's own
        parameters, kept until the next request that allocates. Answers the runner job's refs.
        `workspace_bytes`: what the kernel's evaluation recorded it asks for (0: none)."""
        problem = self.need_problem()
        seed = _field(req, "seed", int, 0)
        workspace = _field(req, "workspace_bytes", int, 0)
        self.release_prepared()
        estimate = problem.metadata["memory"]
        memory.check_fits(problem.path, estimate, problem.device, copies="none")
        if workspace:
            cap, why = memory.workspace_cap(estimate, problem.device, slot_allocated=False)
            if not 0 < workspace <= cap:
                raise RequestError(f"prepare_profile: a workspace of {workspace} bytes is outside 1..{cap} ({why})")
        arena = SharedArena(problem.device)
        try:
            slot = Slot(arena, problem, output_sets=1)
            if workspace:
                slot.add_workspace(workspace)
            staged = slot.stage(problem, CallSpec(seed=seed, kind="problem", params="own"))
            _sync(problem.device)  # the runner reads these buffers from another process
        except BaseException:
            arena.release()
            raise
        self.prepared = Prepared(arena=arena, slot=slot)
        refs = slot.session_refs()
        scalars = slot.scalars(staged)
        return {"inputs": [r if r is not None else sc for r, sc in zip(refs["inputs"], scalars)] + refs["params"],
                "outputs": refs["outputs"][0], "workspace": refs["workspace"], "shared_bytes": arena.bytes}

    # ---- timing and calibration -------------------------------------------------------------
    def _baseline_request(self, req: dict, op: str):
        problem = self.need_problem()
        modes = _field(req, "modes", list, ["eager", "compile"])
        for mode in modes:
            if mode not in timing.MODES:
                raise RequestError(f"unknown timing mode {mode!r}; expected some of {', '.join(timing.MODES)}")
        settings = timing.Settings(
            warmup_ms=_field(req, "warmup_ms", float, 100.0), runs=_field(req, "runs", int, 100),
            cache_dir=_field(req, "cache_dir", str, None), precision=_field(req, "precision", str, compare.DEFAULT_PRECISION),
        )
        n_sets = _field(req, "sets", int, 2)
        seed = _field(req, "seed", int, 0)
        device = _field(req, "device", str, None)
        if device is not None and parse_device(device) != problem.device:
            raise RequestError(f"{op} on {device!r} needs the problem loaded there; it was loaded on "
                               f"{str(problem.device)!r} (send load with that device first)")
        compare.tolerance(settings.precision, problem.dtype, problem.dtype)  # validates the name
        if settings.runs < 1 or n_sets < 1:
            raise RequestError("runs and sets must be >= 1")
        return problem, modes, settings, n_sets, seed

    def op_prepare_baselines(self, req: dict) -> dict:
        """torch.compile of the loaded problem, kept for the next time_baselines with the same
        settings: the CPU-heavy part of the baselines. cutegen bench sends it holding the GPU's lock all
        the same: the first run autotunes on the GPU (worker-protocol.md). Nothing is compiled when the
        compile mode is not asked for or its result is cached."""
        problem, modes, settings, _, seed = self._baseline_request(req, "prepare_baselines")
        self.prepared_compile = None
        if "compile" not in modes:
            return {"compiled": False, "reason": "not asked for"}
        key = timing.cache_key(problem, "compile", settings, _field(req, "sets", int, 2))
        if timing.cache_read(settings.cache_dir, key) is not None:
            return {"compiled": False, "reason": "cached"}
        self.release_prepared()
        example = problem.source.generate(seed)
        try:
            prepared = timing.compile_model(problem, example, settings.precision)
        finally:
            del example
            _restore(problem.params, problem.param_snapshot)
        self.prepared_compile = prepared
        return {"compiled": prepared.error is None, **({"error": prepared.error["error"]} if prepared.error else {})}

    def op_time_baselines(self, req: dict) -> dict:
        problem, modes, settings, n_sets, seed = self._baseline_request(req, "time_baselines")
        prepared, self.prepared_compile = self.prepared_compile, None
        # Private input sets from the problem's own get_inputs(), rotated between runs as the
        # candidate's are replaced; the model keeps its own parameters. Served from the cache, the answer
        # allocates nothing, and what the last evaluation left is freed later (free_buffers).
        if not timing.all_cached(problem, modes, settings, n_sets):
            self.release_prepared()
        try:
            answer = timing.time_baselines(
                problem, lambda: [problem.source.generate(seed + i) for i in range(n_sets)], n_sets, modes, settings,
                prepared)
            # Labelled, so a CPU time (wall clock, for tests and smoke runs) is never read as a GPU one.
            answer["device"] = str(problem.device)
            answer["clock"] = "cuda_events" if problem.device.type == "cuda" else "wall"
            return answer
        finally:
            _restore(problem.params, problem.param_snapshot)  # e.g. BatchNorm running statistics

    def op_calibrate(self, req: dict) -> dict:
        self.release_prepared()  # its buffers are large
        name = _field(req, "device", str, None)
        if name is not None:
            device = parse_device(name)
        elif self.problem is not None:
            device = self.problem.device
        else:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return calibrate.calibrate(device)


def _refuse_random_forward(model, values, outputs, params, snapshot, path: str, seed: int) -> None:
    """A forward() whose result depends on the random generator (dropout in training mode, say)
    cannot be verified against any one reference: refuse it at load, unless the output does not
    actually depend on the draw (a dropout whose effect a later op removes)."""
    problem_loader.seed_everything(seed + 1_000_003)
    again = problem_loader.run_forward(model, values, path)
    _restore(params, snapshot)
    for i, (a, b) in enumerate(zip(outputs, again)):
        if not a.is_floating_point():
            same = torch.equal(a, b)
        else:
            tol = compare.Tolerance(1e-3, 1e-3, 1e-3)
            same = compare.compare(b, a, tol, compare.max_abs_finite(a))["pass"]
        if not same:
            raise ProblemError(
                f"{path}: forward() gives a different output {i} for the same inputs under another random seed (dropout "
                "or another random op in training mode?); a random output cannot be verified: make forward() "
                "deterministic (e.g. call self.eval() in __init__, or p=0)")


def _check_dtypes(path: str, named_values: list) -> None:
    """An unsupported dtype is the problem's error, said at load rather than when a buffer is shared."""
    for what, value in named_values:
        if isinstance(value, torch.Tensor):
            try:
                dtype_name(value.dtype)
            except ProblemError as exc:
                raise ProblemError(f"{path}: {what}: {exc}; use one of the supported dtypes") from None


def _restore(params: list, snapshot: list) -> None:
    with torch.no_grad():
        for param, saved in zip(params, snapshot):
            param.copy_(saved)


