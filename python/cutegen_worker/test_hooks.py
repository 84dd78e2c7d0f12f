"""`debug_write_output`: plays the runner in tests by writing a trial's outputs in the worker itself.

Only registered when CUTEGEN_WORKER_TEST_HOOKS=1 (protocol.py); a production worker answers it
as an unknown op. Request: {"trial", "set": 0|1, "mode", optional "timing": true (`trial` then
indexes the timing sets, which have one output set), "output" (one output index; default all),
"count" (leave_poison: re-poison only the first `count` elements after writing the reference),
"flat_index" and "delta" (perturb_one: the reference plus `delta`, default 1.0, at `flat_index`, default 0),
"input" (identity_input, mutate_input: which forward input, default 0)}.
"""
import copy

import torch

from . import buffers, problem_loader
from .errors import RequestError
from .session import _field

MODES = ("reference", "native", "reference_tf32", "zeros", "leave_poison", "perturb_one", "identity_input",
         "mutate_input")


def round_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """float32 with the mantissa rounded to TF32's 10 bits (round to nearest, ties away, like cvt.rna)."""
    bits = x.contiguous().view(torch.int32)
    rounded = (bits + 0x1000) & -0x2000  # -0x2000 == 0xFFFFE000 as int32
    return rounded.view(torch.float32).reshape(x.shape)


def _tf32_outputs(session, pristine: list) -> list:
    """The problem run in float32 on TF32-rounded inputs and parameters: what a plain-TF32 GEMM gives."""
    problem = session.problem
    values = [_tf32_value(v) for v in pristine]
    model = copy.deepcopy(problem.model)
    with torch.no_grad():
        for p in list(model.parameters()) + list(model.buffers()):
            if p.dtype == torch.float32:
                p.copy_(round_to_tf32(p))
    return problem_loader.run_forward(model, values, problem.path)


def _tf32_value(value):
    if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
        return round_to_tf32(value)
    return value


def _write(out: torch.Tensor, value: torch.Tensor) -> None:
    out.copy_(value.reshape(out.shape).to(device=out.device, dtype=out.dtype))


def debug_write_output(session, req: dict) -> dict:
    index = _field(req, "trial", int, required=True)
    if _field(req, "timing", bool, False):
        timing_sets = session.prepared.timing if session.prepared else []
        if not 0 <= index < len(timing_sets):
            raise RequestError(f"timing set {index} does not exist")
        trial = timing_sets[index]
    else:
        trial = session.need_trial(index)
    which = _field(req, "set", int, 0)
    mode = _field(req, "mode", str, required=True)
    if not 0 <= which < len(trial.outputs):
        raise RequestError(f"set must be below {len(trial.outputs)}")
    if mode not in MODES:
        raise RequestError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    outputs = trial.outputs[which]
    selected = _field(req, "output", int, None)
    if selected is not None and not 0 <= selected < len(outputs):
        raise RequestError(f"output {selected} does not exist; the problem has {len(outputs)} outputs")
    indices = range(len(outputs)) if selected is None else [selected]
    problem = session.problem
    pristine = problem.source.generate(trial.seed, trial.kind, trial.scale)
    refs = problem.reference.compute(pristine)
    other = None
    if mode == "reference_tf32":
        other = _tf32_outputs(session, pristine)
    elif mode == "native":  # what eager PyTorch computes in the problem's own precision
        with torch.no_grad():
            other = problem_loader.run_forward(problem.model, pristine, problem.path)
    for i in indices:
        _apply(mode, req, outputs[i], refs[i], trial, other[i] if other else None)
    return {}


def _apply(mode, req, out, ref, trial, other) -> None:
    if mode == "reference":
        _write(out, ref)
    elif mode in ("reference_tf32", "native"):
        _write(out, other)
    elif mode == "zeros":
        out.zero_()
    elif mode == "leave_poison":
        count = _field(req, "count", int, None)
        if count is None:
            buffers.poison_(out)
        else:
            _write(out, ref)
            buffers.poison_(out.view(-1)[:count])
    elif mode == "perturb_one":
        _write(out, ref)
        out.view(-1)[_field(req, "flat_index", int, 0)] += _field(req, "delta", float, 1.0)
    elif mode == "mutate_input":  # the reference, and the input written over (as an in-place kernel would)
        _write(out, ref)
        with torch.no_grad():
            trial.forward[_field(req, "input", int, 0)].view(-1)[0] += 1.0
    elif mode == "identity_input":
        _write(out, trial.forward[_field(req, "input", int, 0)])
