"""The worker's state (one loaded problem, one prepared set of buffers) and the protocol's operations.

Each `op_*` method takes the request object and returns the `result` object, or raises a
WorkerError; protocol.py owns the wire format.
"""
import gc
import hashlib
import os
from dataclasses import dataclass, field

import torch

from . import buffers, calibrate, compare, inputs, metadata, problem_loader, timing
from .dtypes import dtype_name, problem_dtype
from .errors import ProblemError, RequestError
from .reference import Reference, disable_tf32


@dataclass
class LoadedProblem:
    path: str
    module: object
    model: torch.nn.Module
    device: torch.device
    file_sha256: str
    input_names: list
    param_names: list
    params: list  # named_parameters() then named_buffers(): the kernel contract's order
    param_pristine: list
    output_dtypes: list
    dtype: torch.dtype
    reference: Reference
    metadata: dict


@dataclass
class Trial:
    index: int
    kind: str
    seed: int
    inputs: list  # forward values, then the model's parameters and buffers
    names: list
    pristine: list  # host copies of `inputs` (None for scalars)
    refs: list
    scales: list
    outputs: list  # [set 0 outputs, set 1 outputs]


@dataclass
class Prepared:
    trials: list = field(default_factory=list)
    timing: list = field(default_factory=list)  # [(inputs, outputs)]


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
        raise RequestError(f"device {name!r} is not a torch device name; use cuda, cuda:N or cpu")
    if device.type not in ("cuda", "cpu"):
        raise RequestError(f"device {name!r} is not supported; use cuda, cuda:N or cpu")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ProblemError(
            f"CUDA was requested but torch {torch.__version__} sees no usable GPU "
            f"(torch built for CUDA {torch.version.cuda}); run on a GPU machine, or check the driver and "
            "CUDA_VISIBLE_DEVICES"
        )
    return device


def _release_memory(device) -> None:
    gc.collect()
    if device is not None and device.type == "cuda":
        torch.cuda.empty_cache()


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Session:
    def __init__(self):
        disable_tf32()
        self.problem = None
        self.prepared = None

    # ---- load -----------------------------------------------------------------------------
    def op_load(self, req: dict) -> dict:
        path = _field(req, "problem", str, required=True)
        device = parse_device(_field(req, "device", str, "cuda"))
        seed = _field(req, "seed", int, 0)
        old_device = self.problem.device if self.problem else None
        self.problem = self.prepared = None
        _release_memory(old_device)
        self.problem = self._load(path, device, seed)
        return self.problem.metadata

    def _load(self, path: str, device: torch.device, seed: int) -> LoadedProblem:
        module = problem_loader.import_problem(path)
        model = problem_loader.build_model(module, path, device, seed)
        values = problem_loader.call_get_inputs(module, path, seed, device)
        with metadata.OpRecorder() as recorder:
            outputs = problem_loader.run_forward(model, values, path)
        named = list(model.named_parameters()) + list(model.named_buffers())
        n_params = len(list(model.named_parameters()))
        params = [t.detach() for _, t in named]
        floating = [v.dtype for v in values + params + outputs if isinstance(v, torch.Tensor) and v.is_floating_point()]
        dtype = problem_dtype(floating or [o.dtype for o in outputs])
        input_names = problem_loader.forward_arg_names(model, len(values))
        _check_dtypes(path, [(f"input {n!r}", v) for n, v in zip(input_names, values)]
                      + [(f"parameter {n!r}", t) for (n, _), t in zip(named, params)]
                      + [(f"output {i}", o) for i, o in enumerate(outputs)])
        reference = Reference(model, path, dtype, values, outputs)
        meta = {
            "name": os.path.splitext(os.path.basename(path))[0],
            "inputs": [buffers.describe(v, n) for v, n in zip(values, input_names)],
            "params": [dict(buffers.describe(t, n), buffer=i >= n_params) for i, (n, t) in enumerate(named)],
            "outputs": [buffers.describe(o) for o in outputs],
            "aten_ops": metadata.aten_ops(recorder.ops),
            "workload_class": metadata.workload_class(recorder.ops),
            "flops": metadata.total_flops(recorder.ops),
            "min_bytes": metadata.min_bytes(values, params, outputs),
            "dtype": dtype_name(dtype),
            "reference_dtype": reference.dtype_name(dtype),
        }
        with open(path, "rb") as f:
            file_sha256 = hashlib.sha256(f.read()).hexdigest()
        return LoadedProblem(
            path=path, module=module, model=model, device=device, file_sha256=file_sha256,
            input_names=input_names, param_names=[n for n, _ in named], params=params,
            param_pristine=[buffers.host_clone(p) for p in params], output_dtypes=[o.dtype for o in outputs],
            dtype=dtype, reference=reference, metadata=meta,
        )

    def need_problem(self) -> LoadedProblem:
        if self.problem is None:
            raise RequestError("no problem is loaded; send `load` first")
        return self.problem

    def need_trial(self, index) -> Trial:
        if self.prepared is None:
            raise RequestError("nothing is prepared; send `prepare` first")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.prepared.trials):
            raise RequestError(f"trial {index!r} does not exist; prepare made {len(self.prepared.trials)} trials")
        return self.prepared.trials[index]

    # ---- prepare --------------------------------------------------------------------------
    def op_prepare(self, req: dict) -> dict:
        problem = self.need_problem()
        specs = _field(req, "trials", list, required=True)
        n_timing = _field(req, "timing_sets", int, 0)
        base_seed = _field(req, "timing_seed", int, 0)
        if n_timing < 0:
            raise RequestError("timing_sets must be >= 0")
        parsed = [self._parse_trial_spec(spec) for spec in specs]
        self.prepared = None
        _release_memory(problem.device)
        prepared = Prepared()
        for index, (seed, kind, scale) in enumerate(parsed):
            prepared.trials.append(self._make_trial(problem, index, seed, kind, scale))
        for i in range(n_timing):
            prepared.timing.append(self._make_timing_set(problem, inputs.timing_seed(base_seed, i)))
        _sync(problem.device)  # the runner reads these buffers from another process
        self.prepared = prepared
        return {
            "trials": [self._trial_refs(t) for t in prepared.trials],
            "timing": [{"inputs": [buffers.value_ref(v) for v in ins], "outputs": [buffers.tensor_ref(o) for o in outs]}
                       for ins, outs in prepared.timing],
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

    def _make_trial(self, problem: LoadedProblem, index: int, seed: int, kind: str, scale: float) -> Trial:
        values = inputs.generate(problem, seed, kind, scale)
        # The reference leaves the device at once: only the trial's inputs and outputs stay there.
        refs = [buffers.host_clone(r).contiguous() for r in problem.reference.compute(values)]
        if len(refs) != len(problem.output_dtypes):
            raise ProblemError(f"{problem.path}: forward() returned {len(refs)} outputs for seed {seed} but "
                               f"{len(problem.output_dtypes)} at load; the number of outputs must not change")
        outputs = [[buffers.alloc_output(r.shape, dt, problem.device) for r, dt in zip(refs, problem.output_dtypes)]
                   for _ in range(2)]
        pristine = [buffers.host_clone(v) if isinstance(v, torch.Tensor) else None for v in values]
        return Trial(
            index=index, kind=kind, seed=seed,
            inputs=values + problem.params, names=problem.input_names + problem.param_names,
            pristine=pristine + problem.param_pristine,
            refs=refs, scales=[compare.max_abs_finite(r) for r in refs], outputs=outputs,
        )

    @staticmethod
    def _make_timing_set(problem: LoadedProblem, seed: int) -> tuple:
        values = inputs.generate(problem, seed)
        outs = [buffers.alloc_output(o["shape"], dt, problem.device)
                for o, dt in zip(problem.metadata["outputs"], problem.output_dtypes)]
        return values + problem.params, outs

    @staticmethod
    def _trial_refs(trial: Trial) -> dict:
        return {
            "index": trial.index, "kind": trial.kind, "seed": trial.seed,
            "inputs": [buffers.value_ref(v) for v in trial.inputs],
            "outputs": [[buffers.tensor_ref(o) for o in outs] for outs in trial.outputs],
        }

    # ---- check ----------------------------------------------------------------------------
    def op_check(self, req: dict) -> dict:
        problem = self.need_problem()
        trial = self.need_trial(_field(req, "trial", int, required=True))
        policy = _field(req, "precision", str, "strict")
        _sync(problem.device)
        first, second = trial.outputs
        shape_ok = all(o.shape == r.shape for o, r in zip(first, trial.refs))
        reports, agree, r2r = [], True, 0.0
        for i, (got, again, ref, scale) in enumerate(zip(first, second, trial.refs, trial.scales)):
            tol = compare.tolerance(policy, problem.dtype, got.dtype)
            if not shape_ok:
                continue
            report = compare.compare(got, ref, tol, scale)
            reports.append(dict(index=i, **report))
            same, diff = compare.run_to_run(got, again, tol, scale)
            agree, r2r = agree and same, max(r2r, diff)
        mutated = self._mutated_inputs(trial)
        reason = _reason(shape_ok, reports, agree, mutated)
        for report in reports:
            report.pop("pass")
        return {"trial": trial.index, "kind": trial.kind, "pass": reason == "ok", "reason": reason,
                "outputs": reports, "inputs_mutated": mutated, "run_to_run_max_abs_diff": r2r}

    @staticmethod
    def _mutated_inputs(trial: Trial) -> list:
        names = []
        for value, pristine, name in zip(trial.inputs, trial.pristine, trial.names):
            if pristine is not None and compare.mutated(value, pristine):
                names.append(name)
                with torch.no_grad():  # later trials and the baselines must see the original values
                    value.copy_(pristine)
        return names

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
            cache_dir=_field(req, "cache_dir", str, None),
        )
        if settings.runs < 1:
            raise RequestError("runs must be >= 1")
        try:
            forward_sets = [ins[:len(problem.input_names)] for ins, _ in self.prepared.timing]
            return timing.time_baselines(problem, forward_sets, modes, settings)
        finally:
            _restore_params(problem)  # e.g. BatchNorm running statistics updated by the timed forwards

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


def _restore_params(problem: LoadedProblem) -> None:
    with torch.no_grad():
        for param, pristine in zip(problem.params, problem.param_pristine):
            param.copy_(pristine)


def _reason(shape_ok: bool, reports: list, agree: bool, mutated: list) -> str:
    """The first failure in the order a diagnosis should read them."""
    if not shape_ok:
        return "shape"
    if any(r["unwritten_count"] for r in reports):
        return "unwritten"
    if not all(r["pass"] for r in reports):
        return "mismatch"
    if not agree:
        return "nondeterministic"
    if mutated:
        return "input_mutated"
    return "ok"
