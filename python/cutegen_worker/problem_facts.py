"""The `describe` operation: a problem's forward() arguments, parameters and buffers, outputs and
constructor arguments -- the `load` answer's descriptions -- without a GPU and without the problem's
memory: the model and its inputs are built, and forward() run, on meta tensors. A problem that cannot
run that way (a forward() that reads tensor values) is built and run on the CPU instead.

`cutegen export PROBLEM KERNEL` reads it: the exports list the call the kernel is for and name the
parameters they pass it (docs/export.md). `cutegen prompt` reads `prompt_facts`: the same, with what `load`
adds for a prompt (the operators, FLOPs, bytes, the reference's precision), so a KernelBench-size problem's
prompt needs neither its gigabytes nor a GPU.
"""
import os
import sys
from typing import NamedTuple

import torch

from . import metadata, problem_loader
from .buffers import describe
from .dtypes import dtype_name, problem_dtype
from .errors import ProblemError
from .reference import Reference


def describe_problem(path: str) -> dict:
    module = problem_loader.import_problem(path)
    try:
        return _describe(module, path).description
    finally:
        sys.modules.pop(module.__name__, None)


def prompt_facts(path: str) -> dict:
    """describe_problem's answer with the rest of the `load` answer's facts that a prompt shows: the operators
    forward() ran (`aten_ops`, `workload_class`), its FLOPs and minimum bytes, the reference's precision and
    why it is not upcast, the torch version; `gpu` is empty (there is none)."""
    module = problem_loader.import_problem(path)
    try:
        d = _describe(module, path)
        reference = Reference(d.model, path, d.dtype, d.values)  # tries the upcast model on the same tensors
        facts = dict(d.description)
        facts.update({
            "aten_ops": metadata.aten_ops(d.recorded),
            "workload_class": metadata.workload_class(d.recorded),
            "flops": metadata.total_flops(d.recorded),
            "min_bytes": metadata.min_bytes(d.values, d.params, d.outputs),
            "reference_dtype": reference.dtype_name(d.dtype),
            "torch_version": torch.__version__,
            "gpu": "",
        })
        if reference.note:
            facts["reference_note"] = reference.note
        return facts
    finally:
        sys.modules.pop(module.__name__, None)


class Described(NamedTuple):
    description: dict  # the `describe` answer
    model: torch.nn.Module
    values: list  # forward()'s arguments
    params: list  # parameters, then buffers
    outputs: list
    recorded: list  # the ops forward() ran (metadata.OpRecorder)
    dtype: torch.dtype  # the problem's least precise floating dtype


def _describe(module, path: str) -> Described:
    meta = torch.device("meta")
    try:
        model, init_inputs, values, outputs, recorded = _build_and_run(module, path, meta)
        ran_on = "meta"
    except ProblemError:
        # The problem's own errors surface here, from the CPU run, with its file and line.
        model, init_inputs, values, outputs, recorded = _build_and_run(module, path, torch.device("cpu"))
        ran_on = "cpu"
    named = list(model.named_parameters()) + list(model.named_buffers())
    n_params = len(list(model.named_parameters()))
    input_names = problem_loader.forward_arg_names(model, len(values))
    params = [t for _, t in named]
    floating = [v.dtype for v in values + params + outputs if isinstance(v, torch.Tensor) and v.is_floating_point()]
    dtype = problem_dtype(floating or [o.dtype for o in outputs])
    description = {
        "name": os.path.splitext(os.path.basename(path))[0],
        "inputs": [describe(v, n) for v, n in zip(values, input_names)],
        "params": [dict(describe(t, n), buffer=i >= n_params) for i, (n, t) in enumerate(named)],
        "outputs": [describe(o) for o in outputs],
        "init_inputs": problem_loader.describe_init_inputs(type(model), init_inputs),
        "dtype": dtype_name(dtype),
        "ran_on": ran_on,
    }
    return Described(description, model, values, params, outputs, recorded, dtype)


def _build_and_run(module, path: str, device: torch.device):
    """Model(*get_init_inputs()), get_inputs() and one forward() on `device`, under seed 0, with the ops the
    forward() ran (as `load` records them)."""
    if device.type == "meta":
        with device:  # factories in __init__ and get_inputs() make meta tensors: no memory, no time
            model, init_inputs = problem_loader.build_model(module, path, device, 0)
            values = problem_loader.call_get_inputs(module, path, 0, device, on_device=True)
    else:
        model, init_inputs = problem_loader.build_model(module, path, device, 0)
        values = problem_loader.call_get_inputs(module, path, 0, device, on_device=False)
    with metadata.OpRecorder() as recorder:
        outputs = problem_loader.run_forward(model, values, path)
    return model, init_inputs, values, outputs, recorder.ops
