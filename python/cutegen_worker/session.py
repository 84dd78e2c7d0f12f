"""The worker's state (one loaded problem, one prepared set of shared buffers) and the protocol's operations.

Each `op_*` method takes the request object and returns the `result` object, or raises a
WorkerError; protocol.py owns the wire format.

What lives where:
* shared with the runner (shared_buffers.SharedArena, one dedicated allocation each): every
  trial's inputs and two output sets, one copy of the parameters and buffers, the timing sets;
* private to the worker (torch's allocator): the model, its upcast reference copy and, only while
  a check runs, the regenerated inputs and the reference outputs. Nothing private is kept per
  trial, so a prepare's footprint is its shared buffers plus one check's workspace.
"""
import gc
import hashlib
import os
import sys
from dataclasses import dataclass, field

import torch

from . import calibrate, compare, inputs, memory, metadata, problem_loader, timing
from .buffers import describe, poison_, scalar_ref
from .dtypes import dtype_name, problem_dtype
from .errors import ProblemError, RequestError
from .reference import Reference, disable_tf32
from .shared_buffers import SharedArena


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


@dataclass
class InputSet:
    """One set of shared inputs and its output sets (two for a trial, one for timing)."""
    index: int
    kind: str
    seed: int
    scale: float
    forward: list  # shared tensors and Python scalars, in get_inputs() order
    outputs: list  # [[tensor per output] per output set]


@dataclass
class Prepared:
    arena: SharedArena
    params: list = field(default_factory=list)  # shared copies of LoadedProblem.params
    trials: list = field(default_factory=list)
    timing: list = field(default_factory=list)


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
    def __init__(self):
        disable_tf32()
        self.problem = None
        self.prepared = None

    # ---- buffers ----------------------------------------------------------------------------
    def release_prepared(self) -> None:
        """Frees the shared buffers of the last prepare (and what torch caches) before new ones."""
        if self.prepared is not None:
            arena, self.prepared = self.prepared.arena, None
            arena.release()
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
        self.release_prepared()
        self.problem = self._load(os.path.abspath(path), device, seed)
        return self.problem.metadata

    def _load(self, path: str, device: torch.device, seed: int) -> LoadedProblem:
        module = problem_loader.import_problem(path)
        model = problem_loader.build_model(module, path, device, seed)
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
        floating = [v.dtype for v in values + params + outputs if isinstance(v, torch.Tensor) and v.is_floating_point()]
        dtype = problem_dtype(floating or [o.dtype for o in outputs])
        reference = Reference(model, path, dtype, values, outputs)
        _restore(params, snapshot)
        workspace = self._measure_check_workspace(source, reference, outputs, seed, device)
        meta = {
            "name": os.path.splitext(os.path.basename(path))[0],
            "inputs": [describe(v, n) for v, n in zip(values, input_names)],
            "params": [dict(describe(t, n), buffer=i >= n_params) for i, (n, t) in enumerate(named)],
            "outputs": [describe(o) for o in outputs],
            "aten_ops": metadata.aten_ops(recorder.ops),
            "workload_class": metadata.workload_class(recorder.ops),
            "flops": metadata.total_flops(recorder.ops),
            "min_bytes": metadata.min_bytes(values, params, outputs),
            "dtype": dtype_name(dtype),
            "reference_dtype": reference.dtype_name(dtype),
            "gpu": timing.device_name(device),
            "torch_version": torch.__version__,
            "memory": memory.estimates(values, params, outputs, workspace, device),
        }
        with open(path, "rb") as f:
            file_sha256 = hashlib.sha256(f.read()).hexdigest()
        return LoadedProblem(
            path=path, module=module, model=model, device=device, file_sha256=file_sha256, source=source,
            input_names=input_names, param_names=[n for n, _ in named], params=params, param_snapshot=snapshot,
            output_shapes=[tuple(o.shape) for o in outputs], output_dtypes=[o.dtype for o in outputs],
            dtype=dtype, reference=reference, metadata=meta,
        )

    @staticmethod
    def _measure_check_workspace(source, reference, native_outputs, seed, device) -> int:
        """Device memory one `check` needs beyond the shared buffers, measured by doing its work
        once: regenerate inputs, compute the reference, compare an output set against it."""
        with memory.PeakMeter(device) as meter:
            pristine = source.generate(seed)
            refs = reference.compute(pristine)
            for out, ref in zip(native_outputs, refs):
                tol = compare.tolerance("strict", out.dtype, out.dtype)
                compare.compare(out, ref, tol, compare.max_abs_finite(ref))
            del pristine, refs
        return meter.peak

    def need_problem(self) -> LoadedProblem:
        if self.problem is None:
            raise RequestError("no problem is loaded; send `load` first")
        return self.problem

    def need_trial(self, index) -> InputSet:
        if self.prepared is None:
            raise RequestError("nothing is prepared; send `prepare` first")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.prepared.trials):
            raise RequestError(f"trial {index!r} does not exist; prepare made {len(self.prepared.trials)} trials")
        return self.prepared.trials[index]

    # ---- prepare ----------------------------------------------------------------------------
    def op_prepare(self, req: dict) -> dict:
        problem = self.need_problem()
        specs = _field(req, "trials", list, required=True)
        n_timing = _field(req, "timing_sets", int, 0)
        base_seed = _field(req, "timing_seed", int, 0)
        if n_timing < 0:
            raise RequestError("timing_sets must be >= 0")
        parsed = [self._parse_trial_spec(spec) for spec in specs]
        self.release_prepared()
        memory.check_fits(problem.path, problem.metadata["memory"], len(parsed), n_timing, problem.device)
        prepared = Prepared(arena=SharedArena(problem.device))
        try:
            prepared.params = [prepared.arena.copy_of(p) for p in problem.params]
            for index, (seed, kind, scale) in enumerate(parsed):
                prepared.trials.append(self._make_set(problem, prepared.arena, index, seed, kind, scale, 2))
            for i in range(n_timing):
                seed = inputs.timing_seed(base_seed, i)
                prepared.timing.append(self._make_set(problem, prepared.arena, i, seed, "problem", 1.0, 1))
            _sync(problem.device)  # the runner reads these buffers from another process
        except BaseException:
            prepared.arena.release()
            raise
        self.prepared = prepared
        arena = prepared.arena
        params = [arena.ref(p) for p in prepared.params]
        return {
            "trials": [{"index": t.index, "kind": t.kind, "seed": t.seed,
                        "inputs": self._input_refs(arena, t) + params,
                        "outputs": [[arena.ref(o) for o in outs] for outs in t.outputs]} for t in prepared.trials],
            "timing": [{"seed": s.seed, "inputs": self._input_refs(arena, s) + params,
                        "outputs": [arena.ref(o) for o in s.outputs[0]]} for s in prepared.timing],
            "shared_bytes": arena.bytes,
        }

    @staticmethod
    def _parse_trial_spec(spec) -> tuple:
        if not isinstance(spec, dict):
            raise RequestError(f"a trial must be an object with seed and kind, got {spec!r}")
        seed = _field(spec, "seed", int, required=True)
        kind = _field(spec, "kind", str, "problem")
        if kind not in inputs.TRIAL_KINDS:
            raise RequestError(f"unknown trial kind {kind!r}; expected one of {', '.join(inputs.TRIAL_KINDS)}")
        scale = _field(spec, "scale", float, required=kind == "scaled")
        return seed, kind, 1.0 if scale is None else scale

    @staticmethod
    def _make_set(problem, arena, index, seed, kind, scale, n_output_sets) -> InputSet:
        values = problem.source.generate(seed, kind, scale)
        forward = [arena.copy_of(v) if isinstance(v, torch.Tensor) else v for v in values]
        del values  # the generated tensors live in torch's allocator: they must not stay around
        outputs = [[poison_(arena.empty(shape, dt)) for shape, dt in zip(problem.output_shapes, problem.output_dtypes)]
                   for _ in range(n_output_sets)]
        return InputSet(index=index, kind=kind, seed=seed, scale=scale, forward=forward, outputs=outputs)

    @staticmethod
    def _input_refs(arena, input_set: InputSet) -> list:
        return [arena.ref(v) if isinstance(v, torch.Tensor) else scalar_ref(v) for v in input_set.forward]

    # ---- check ------------------------------------------------------------------------------
    def op_check(self, req: dict) -> dict:
        problem = self.need_problem()
        trial = self.need_trial(_field(req, "trial", int, required=True))
        policy = _field(req, "precision", str, "strict")
        compare.tolerance(policy, problem.dtype, problem.dtype)  # an unknown policy fails before any work
        _sync(problem.device)
        mutated, refs = self.verify_inputs_and_reference(trial)
        reports, agree, r2r = [], True, 0.0
        for i, ref in enumerate(refs):
            tol = compare.tolerance(policy, problem.dtype, trial.outputs[0][i].dtype)
            ref = compare.expected_values(ref, trial.outputs[0][i].dtype)
            scale = compare.max_abs_finite(ref)
            # Both output sets against the reference: a candidate that skips work on the second
            # call with the same inputs leaves set 1 unwritten.
            per_set = [dict(compare.compare(outs[i], ref, tol, scale), set=s) for s, outs in enumerate(trial.outputs)]
            # The report shown is a failing set's, an unwritten one first: "unwritten in either set"
            # outranks a plain mismatch in the other (docs/worker-protocol.md).
            failing = sorted((r for r in per_set if not r["pass"]), key=lambda r: r["unwritten_count"] == 0)
            reports.append(dict(index=i, **(failing[0] if failing else per_set[0])))
            same, diff = compare.run_to_run(trial.outputs[0][i], trial.outputs[1][i], tol, scale)
            agree, r2r = agree and same, max(r2r, diff)
        del refs
        reason = _reason(reports, agree, mutated)
        for report in reports:
            report.pop("pass")
        return {"trial": trial.index, "kind": trial.kind, "seed": trial.seed, "pass": reason == "ok",
                "reason": reason, "outputs": reports, "inputs_mutated": mutated, "run_to_run_max_abs_diff": r2r}

    def verify_inputs_and_reference(self, input_set: InputSet) -> tuple:
        """Generates the set's inputs again, restores any shared input (or parameter) the candidate
        changed, and computes the reference from the pristine values.
        Returns (names of the changed inputs, reference outputs)."""
        problem = self.problem
        pristine = problem.source.generate(input_set.seed, input_set.kind, input_set.scale)
        mutated = []
        pairs = list(zip(input_set.forward, pristine, problem.input_names)) + \
            list(zip(self.prepared.params, problem.params, problem.param_names))
        for shared, original, name in pairs:
            if isinstance(shared, torch.Tensor) and compare.mutated(shared, original):
                mutated.append(name)
                with torch.no_grad():  # later checks and the baselines must see the original values
                    shared.copy_(original)
        refs = problem.reference.compute(pristine)
        shapes = [tuple(r.shape) for r in refs]
        if shapes != problem.output_shapes:
            # The harness allocates the outputs from the shapes seen at load.
            raise ProblemError(f"{problem.path}: forward() returned outputs of shapes {shapes} for seed "
                               f"{input_set.seed} but {problem.output_shapes} at load; output shapes must not "
                               "depend on input values")
        return mutated, refs

    def op_check_timing(self, req: dict) -> dict:
        """After the runner's timing runs: each timing set's inputs unchanged, and its output (the
        last timed call on that set) right. A candidate that is only correct when it is not being
        timed, or that changes its inputs to speed up later calls, fails here."""
        problem = self.need_problem()
        if self.prepared is None:
            raise RequestError("nothing is prepared; send `prepare` first")
        policy = _field(req, "precision", str, "strict")
        _sync(problem.device)
        sets, first_failure = [], "ok"
        for s in self.prepared.timing:
            mutated, refs = self.verify_inputs_and_reference(s)
            reports = []
            for i, ref in enumerate(refs):
                tol = compare.tolerance(policy, problem.dtype, s.outputs[0][i].dtype)
                ref = compare.expected_values(ref, s.outputs[0][i].dtype)
                reports.append(dict(index=i, **compare.compare(s.outputs[0][i], ref, tol, compare.max_abs_finite(ref))))
            del refs
            reason = _reason(reports, True, mutated)
            for r in reports:
                r.pop("pass")
            sets.append({"index": s.index, "seed": s.seed, "reason": reason, "outputs": reports,
                         "inputs_mutated": mutated})
            if first_failure == "ok":
                first_failure = reason
        return {"pass": first_failure == "ok", "reason": first_failure, "sets": sets}

    # ---- timing and calibration -------------------------------------------------------------
    def op_time_baselines(self, req: dict) -> dict:
        problem = self.need_problem()
        if self.prepared is None or not self.prepared.timing:
            raise RequestError("time_baselines needs timing input sets; send `prepare` with timing_sets >= 1 first")
        modes = _field(req, "modes", list, ["eager", "compile"])
        for mode in modes:
            if mode not in timing.MODES:
                raise RequestError(f"unknown timing mode {mode!r}; expected some of {', '.join(timing.MODES)}")
        settings = timing.Settings(
            warmup_ms=_field(req, "warmup_ms", float, 100.0), runs=_field(req, "runs", int, 100),
            cache_dir=_field(req, "cache_dir", str, None), precision=_field(req, "precision", str, "strict"),
        )
        compare.tolerance(settings.precision, problem.dtype, problem.dtype)  # validates the name
        if settings.runs < 1:
            raise RequestError("runs must be >= 1")
        # The baselines run on the inputs as generated, whatever a candidate did to the buffers.
        for s in self.prepared.timing:
            self._restore_inputs(s)
        try:
            return timing.time_baselines(problem, [s.forward for s in self.prepared.timing], modes, settings)
        finally:
            _restore(problem.params, problem.param_snapshot)  # e.g. BatchNorm running statistics

    def _restore_inputs(self, input_set: InputSet) -> None:
        pristine = self.problem.source.generate(input_set.seed, input_set.kind, input_set.scale)
        with torch.no_grad():
            for shared, original in zip(input_set.forward, pristine):
                if isinstance(shared, torch.Tensor) and compare.mutated(shared, original):
                    shared.copy_(original)

    def op_calibrate(self, req: dict) -> dict:
        name = _field(req, "device", str, None)
        if name is not None:
            device = parse_device(name)
        elif self.problem is not None:
            device = self.problem.device
        else:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return calibrate.calibrate(device)


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
