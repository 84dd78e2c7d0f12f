"""The `describe` operation: a problem's forward() arguments, parameters and buffers, outputs and
constructor arguments -- the `load` answer's descriptions -- without a GPU and without the problem's
memory: the model and its inputs are built, and forward() run, on meta tensors. A problem that cannot
run that way (a forward() that reads tensor values) is built and run on the CPU instead.

`cutegen export PROBLEM KERNEL` reads it: the exports list the call the kernel is for and name the
parameters they pass it (docs/export.md).
"""
import os
import sys

import torch

from . import problem_loader
from .buffers import describe
from .dtypes import dtype_name, problem_dtype
from .errors import ProblemError


def describe_problem(path: str) -> dict:
    module = problem_loader.import_problem(path)
    try:
        return _describe(module, path)
    finally:
        sys.modules.pop(module.__name__, None)


def _describe(module, path: str) -> dict:
    meta = torch.device("meta")
    try:
        model, init_inputs, values, outputs = _build_and_run(module, path, meta)
        ran_on = "meta"
    except ProblemError:
        # The problem's own errors surface here, from the CPU run, with its file and line.
        model, init_inputs, values, outputs = _build_and_run(module, path, torch.device("cpu"))
        ran_on = "cpu"
    named = list(model.named_parameters()) + list(model.named_buffers())
    n_params = len(list(model.named_parameters()))
    input_names = problem_loader.forward_arg_names(model, len(values))
    floating = [v.dtype for v in values + [t for _, t in named] + outputs
                if isinstance(v, torch.Tensor) and v.is_floating_point()]
    return {
        "name": os.path.splitext(os.path.basename(path))[0],
        "inputs": [describe(v, n) for v, n in zip(values, input_names)],
        "params": [dict(describe(t, n), buffer=i >= n_params) for i, (n, t) in enumerate(named)],
        "outputs": [describe(o) for o in outputs],
        "init_inputs": problem_loader.describe_init_inputs(type(model), init_inputs),
        "dtype": dtype_name(problem_dtype(floating or [o.dtype for o in outputs])),
        "ran_on": ran_on,
    }


def _build_and_run(module, path: str, device: torch.device):
    """Model(*get_init_inputs()), get_inputs() and one forward() on `device`, under seed 0."""
    if device.type == "meta":
        with device:  # factories in __init__ and get_inputs() make meta tensors: no memory, no time
            model, init_inputs = problem_loader.build_model(module, path, device, 0)
            values = problem_loader.call_get_inputs(module, path, 0, device, on_device=True)
    else:
        model, init_inputs = problem_loader.build_model(module, path, device, 0)
        values = problem_loader.call_get_inputs(module, path, 0, device, on_device=False)
    outputs = problem_loader.run_forward(model, values, path)
    return model, init_inputs, values, outputs
