"""Imports a KernelBench-format problem file and runs its pieces, turning every way the file can be
wrong into ONE ProblemError that names the file, the line where there is one, and what to do.

The format: `class Model(nn.Module)`, `get_inputs()` (the forward arguments: tensors and Python
int/float/bool), `get_init_inputs()` (Model's constructor arguments), module-level constants.
"""
import importlib.util
import inspect
import itertools
import os
import random
import sys
import traceback

import torch

from .buffers import describe
from . import memory
from .errors import ProblemError, WorkerError

_MAX_MESSAGE = 1500
_module_counter = itertools.count()


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + " ..."


def _line_in_file(exc: BaseException, path: str):
    """(line number, source text) of the innermost traceback frame inside the problem file."""
    real = os.path.realpath(path)
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == real:
            found = (frame.lineno, (frame.line or "").strip())
    return found


def user_code_error(path: str, what: str, exc: BaseException, hint: str) -> WorkerError:
    """A ProblemError for an exception raised by the user's code (`what` names the call) — unless it ran
    out of GPU memory that other processes held: the machine's error then (memory.GpuMemoryBusy)."""
    busy = memory.out_of_memory_error(path, what, exc)
    if busy is not None:
        return busy
    where = _line_in_file(exc, path)
    location = f"{path}:{where[0]}" if where else path
    source = f" (at `{where[1]}`)" if where and where[1] else ""
    message = f"{location}: {what} raised {type(exc).__name__}: {_short(exc)}{source}; {hint}"
    return ProblemError(message)


def import_problem(path: str):
    """Executes the file as a fresh module (a new name each time, so reloading re-reads constants)."""
    if not os.path.isfile(path):
        raise ProblemError(f"{path}: no such file; give the path of a KernelBench-format problem file")
    name = f"cutegen_problem_{next(_module_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        source = open(path, encoding="utf-8").read()
        code = compile(source, path, "exec")
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        snippet = f": `{text}`" if text else ""
        raise ProblemError(f"{path}:{exc.lineno}: syntax error: {exc.msg}{snippet}; fix it so the file imports")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"{path}: cannot read the file: {exc}")
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise user_code_error(path, "importing the file", exc, "fix the module-level code so the file imports")
    check_problem_api(module, path)
    return module


def check_problem_api(module, path: str) -> None:
    model = getattr(module, "Model", None)
    if model is None:
        raise ProblemError(f"{path}: class Model is missing; define class Model(nn.Module) with a forward() method")
    if not (inspect.isclass(model) and issubclass(model, torch.nn.Module)):
        raise ProblemError(f"{path}: Model is not a subclass of torch.nn.Module; define class Model(nn.Module)")
    if not callable(getattr(module, "get_inputs", None)):
        raise ProblemError(f"{path}: get_inputs() is missing; define get_inputs() returning a list of inputs")
    if not callable(getattr(module, "get_init_inputs", None)):
        raise ProblemError(
            f"{path}: get_init_inputs() is missing; define get_init_inputs() returning the list of Model's "
            "constructor arguments ([] when there are none)"
        )


def _as_list(value, path: str, function: str):
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ProblemError(f"{path}: {function} returned a {type(value).__name__}; it must return a list")


def seed_everything(seed: int) -> None:
    """Seeds every generator a problem file is likely to draw from, so a seed fixes its values."""
    random.seed(seed)
    torch.manual_seed(seed)  # the CPU and every CUDA generator
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed & 0xFFFF_FFFF)


def build_model(module, path: str, device: torch.device, seed: int):
    """Model(*get_init_inputs()) under the seed, built on the CPU (like KernelBench) and moved; returns
    the model and the init inputs it was built from."""
    seed_everything(seed)
    try:
        init_inputs = module.get_init_inputs()
    except Exception as exc:
        raise user_code_error(path, "get_init_inputs()", exc, "fix get_init_inputs()")
    init_inputs = _as_list(init_inputs, path, "get_init_inputs()")
    try:
        model = module.Model(*init_inputs)
    except Exception as exc:
        raise user_code_error(path, "Model.__init__", exc, "fix Model.__init__ or get_init_inputs()")
    try:
        return model.to(device), init_inputs
    except Exception as exc:
        raise user_code_error(path, f"moving the model to {device}", exc, "keep the model's state in tensors")


def describe_init_inputs(model_class, init_inputs: list) -> list:
    """get_init_inputs() for the load answer: each value described like a forward input and named after
    the Model.__init__ parameter it binds to, then the parameters it leaves at their defaults (marked
    "default": true), so a prompt can state an `eps=1e-5` the problem file only implies."""
    try:
        params = list(inspect.signature(model_class.__init__).parameters.values())[1:]  # without self
    except (TypeError, ValueError):
        params = []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = [_describe_init_value(v, positional[i].name if i < len(positional) else None)
           for i, v in enumerate(init_inputs)]
    left_out = positional[len(init_inputs):] + [p for p in params if p.kind == p.KEYWORD_ONLY]
    for p in left_out:
        if p.default is not p.empty:
            out.append(dict(_describe_init_value(p.default, p.name), default=True))
    return out


def _describe_init_value(value, name):
    if isinstance(value, (torch.Tensor, bool, int, float)):
        return describe(value, name)
    entry = {} if name is None else {"name": name}
    entry.update({"kind": "other", "value": repr(value)})
    return entry


def call_get_inputs(module, path: str, seed: int, device: torch.device, on_device: bool = True) -> list:
    """get_inputs() under the seed; tensors end up on `device`.

    With `on_device`, factories run under `with device:` so that huge random inputs are generated
    on the GPU (seconds instead of minutes); otherwise on the CPU and moved. The caller decides
    once per problem (inputs.InputSource) so a seed always gives the same values.
    """
    seed_everything(seed)
    try:
        if on_device and device.type != "cpu":
            with device:
                values = module.get_inputs()
        else:
            values = module.get_inputs()
    except Exception as exc:
        raise user_code_error(path, "get_inputs()", exc, "fix get_inputs()")
    values = _as_list(values, path, "get_inputs()")
    return [_checked_input(value, i, path, device) for i, value in enumerate(values)]


def _checked_input(value, index: int, path: str, device: torch.device):
    if isinstance(value, torch.Tensor):
        return value.detach().to(device)
    if isinstance(value, (bool, int, float)):
        return value
    raise ProblemError(
        f"{path}: get_inputs() item {index} is a {type(value).__name__}; forward() arguments must be "
        "tensors or Python int/float/bool"
    )


def run_forward(model: torch.nn.Module, inputs: list, path: str) -> list:
    """forward() under no_grad; the result as a list of tensors (a tuple/list result gives several)."""
    try:
        with torch.no_grad():
            result = model(*inputs)
    except Exception as exc:
        raise user_code_error(path, "forward()", exc, "fix forward() so it runs on the inputs of get_inputs()")
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    for i, out in enumerate(outputs):
        if not isinstance(out, torch.Tensor):
            raise ProblemError(
                f"{path}: forward() returned a {type(out).__name__} as output {i}; return a tensor or a "
                "tuple/list of tensors"
            )
    if not outputs:
        raise ProblemError(f"{path}: forward() returned an empty tuple; return at least one tensor")
    return outputs


def forward_arg_names(model: torch.nn.Module, count: int) -> list:
    """Names of forward()'s parameters, for the metadata and the mutation report (`arg{i}` beyond)."""
    names = []
    try:
        for p in inspect.signature(model.forward).parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
    except (TypeError, ValueError):
        pass
    return [names[i] if i < len(names) else f"arg{i}" for i in range(count)]
