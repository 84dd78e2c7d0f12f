"""`debug_write_output`: plays the runner in tests by writing a trial's outputs in the worker itself.

Only registered when CUTEGEN_WORKER_TEST_HOOKS=1 (protocol.py); a production worker answers it
as an unknown op. Request: {"trial", "set": 0|1, "mode", optional "output" (one output index;
default all), "count" (leave_poison: re-poison only the first `count` elements after writing the
reference), "flat_index" and "delta" (perturb_one: add `delta`, default 1.0, at `flat_index`,
default 0), "input" (identity_input: which forward input to copy, default 0)}.
"""
import copy

import torch

from . import buffers, problem_loader
from .errors import RequestError
from .session import _field

MODES = ("reference", "reference_tf32", "zeros", "leave_poison", "perturb_one", "identity_input")


def round_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """float32 with the mantissa rounded to TF32's 10 bits (round to nearest, ties away, like cvt.rna)."""
    bits = x.contiguous().view(torch.int32)
    rounded = (bits + 0x1000) & -0x2000  # -0x2000 == 0xFFFFE000 as int32
    return rounded.view(torch.float32).reshape(x.shape)


def _tf32_outputs(session, trial) -> list:
    """The problem run in float32 on TF32-rounded inputs and parameters: what a plain-TF32 GEMM gives."""
    problem = session.problem
    n_forward = len(trial.inputs) - len(problem.params)
    forward, pristine = trial.inputs[:n_forward], trial.pristine[:n_forward]
    values = [v if p is None else _tf32_value(p) for v, p in zip(forward, pristine)]
    model = copy.deepcopy(problem.model).to("cpu")
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
    trial = session.need_trial(_field(req, "trial", int, required=True))
    which = _field(req, "set", int, 0)
    mode = _field(req, "mode", str, required=True)
    if which not in (0, 1):
        raise RequestError("set must be 0 or 1")
    if mode not in MODES:
        raise RequestError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    outputs = trial.outputs[which]
    selected = _field(req, "output", int, None)
    if selected is not None and not 0 <= selected < len(outputs):
        raise RequestError(f"output {selected} does not exist; the problem has {len(outputs)} outputs")
    indices = range(len(outputs)) if selected is None else [selected]
    tf32 = _tf32_outputs(session, trial) if mode == "reference_tf32" else None
    for i in indices:
        _apply(mode, req, outputs[i], trial.refs[i], trial, tf32[i] if tf32 else None)
    return {}


def _apply(mode, req, out, ref, trial, tf32_ref) -> None:
    if mode == "reference":
        _write(out, ref)
    elif mode == "reference_tf32":
        _write(out, tf32_ref)
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
    elif mode == "identity_input":
        _write(out, trial.inputs[_field(req, "input", int, 0)])
