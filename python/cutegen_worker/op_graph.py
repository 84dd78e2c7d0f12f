"""The `trace` operation: a problem's forward() as a small operator graph for the seed matcher
(src/seed/, docs/seed.md).

torch.fx.symbolic_trace captures forward() as Python sees it -- before dispatch, so `F.relu`,
`torch.relu`, `x.relu()` and `nn.ReLU` are all still visible and a module's Python attributes
(`self.negative_slope`) are already constants. Each node is normalised here to a canonical op name
with its scalar arguments bound by name (defaults filled in), so the C++ side never needs to know
torch's spellings. Shapes and dtypes come from running the traced graph on meta tensors, which costs
nothing even for KernelBench's 6 GiB inputs; a problem whose model or inputs cannot be built on the
meta device is built on the CPU instead.

A forward() that fx cannot capture (data-dependent control flow, say) is an answer with the reason,
not an error: the matcher reports it as the reason there is no seed.
"""
import math
import operator
import sys

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata

from . import problem_loader
from .dtypes import dtype_name
from .errors import ProblemError

_REQUIRED = object()

# Canonical op -> its scalar parameters after the operand(s), in positional order, with defaults.
# `inplace` is listed where the functional form takes it, so positional binding matches torch.
UNARY = {
    "relu": [("inplace", False)], "relu6": [("inplace", False)], "sigmoid": [], "tanh": [],
    "silu": [("inplace", False)], "mish": [("inplace", False)], "selu": [("inplace", False)],
    "hardsigmoid": [("inplace", False)], "hardswish": [("inplace", False)], "softsign": [],
    "logsigmoid": [], "tanhshrink": [],
    "gelu": [("approximate", "none")],
    "elu": [("alpha", 1.0), ("inplace", False)],
    "celu": [("alpha", 1.0), ("inplace", False)],
    "leaky_relu": [("negative_slope", 0.01), ("inplace", False)],
    "hardtanh": [("min_val", -1.0), ("max_val", 1.0), ("inplace", False)],
    "softplus": [("beta", 1.0), ("threshold", 20.0)],
    "threshold": [("threshold", _REQUIRED), ("value", _REQUIRED), ("inplace", False)],
    "softshrink": [("lambd", 0.5)], "hardshrink": [("lambd", 0.5)],
    "clamp": [("min", None), ("max", None)],
    "clamp_min": [("min", _REQUIRED)], "clamp_max": [("max", _REQUIRED)],
    "exp": [], "exp2": [], "expm1": [], "log": [], "log2": [], "log10": [], "log1p": [],
    "abs": [], "neg": [], "sqrt": [], "rsqrt": [], "square": [], "reciprocal": [], "sign": [],
    "sin": [], "cos": [], "erf": [], "floor": [], "ceil": [], "round": [], "trunc": [],
    "identity": [],
}
# Over a dimension: one tensor operand, the dimension and the dtype it computes in. (torch.softmax takes
# dtype third where F.softmax has _stacklevel: a positional dtype lands on _stacklevel, is not a number,
# and the node is left unknown -- refused, never misread.)
ROWWISE = {
    "softmax": [("dim", None), ("_stacklevel", 3), ("dtype", None)],
    "log_softmax": [("dim", None), ("_stacklevel", 3), ("dtype", None)],
}
# Two operands (tensor or number each), then scalar parameters.
BINARY = {
    "add": [("alpha", 1)], "sub": [("alpha", 1)], "mul": [], "div": [("rounding_mode", None)],
    "pow": [], "maximum": [], "minimum": [],
}

_SIMPLE = [n for n in UNARY if n not in ("identity",)] + list(BINARY) + list(ROWWISE)

# Functions by identity: torch.X, torch.X_, F.X, F.X_, torch.special.X where they exist.
_FUNCTIONS = {}
for _name in _SIMPLE:
    for _space in (torch, F, torch.special):
        for _suffix, _inplace in (("", False), ("_", True)):
            _fn = getattr(_space, _name + _suffix, None)
            if callable(_fn):
                _FUNCTIONS.setdefault(_fn, (_name, _inplace))
_FUNCTIONS.update({
    torch.clip: ("clamp", False), torch.clip_: ("clamp", True), torch.negative: ("neg", False),
    torch.true_divide: ("div", False), torch.divide: ("div", False), torch.multiply: ("mul", False),
    torch.subtract: ("sub", False), torch.special.expit: ("sigmoid", False), torch.absolute: ("abs", False),
    torch.rsub: ("rsub", False),
    operator.add: ("add", False), operator.sub: ("sub", False), operator.mul: ("mul", False),
    operator.truediv: ("div", False), operator.pow: ("pow", False), operator.neg: ("neg", False),
    operator.abs: ("abs", False), operator.iadd: ("add", True), operator.isub: ("sub", True),
    operator.imul: ("mul", True), operator.itruediv: ("div", True),
})

_METHOD_ALIASES = {"clip": "clamp", "negative": "neg", "multiply": "mul", "divide": "div", "true_divide": "div",
                   "subtract": "sub", "absolute": "abs", "contiguous": "identity", "clone": "identity",
                   "detach": "identity"}

# Module classes -> (canonical op, {param: attribute}); subclasses before their bases (ReLU6 is a Hardtanh).
_MODULES = [
    (nn.ReLU6, "relu6", {}), (nn.ReLU, "relu", {}), (nn.Sigmoid, "sigmoid", {}), (nn.Tanh, "tanh", {}),
    (nn.SiLU, "silu", {}), (nn.Mish, "mish", {}), (nn.SELU, "selu", {}), (nn.Hardsigmoid, "hardsigmoid", {}),
    (nn.Hardswish, "hardswish", {}), (nn.Softsign, "softsign", {}), (nn.LogSigmoid, "logsigmoid", {}),
    (nn.Tanhshrink, "tanhshrink", {}), (nn.Identity, "identity", {}),
    (nn.GELU, "gelu", {"approximate": "approximate"}), (nn.ELU, "elu", {"alpha": "alpha"}),
    (nn.CELU, "celu", {"alpha": "alpha"}), (nn.LeakyReLU, "leaky_relu", {"negative_slope": "negative_slope"}),
    (nn.Hardtanh, "hardtanh", {"min_val": "min_val", "max_val": "max_val"}),
    (nn.Softplus, "softplus", {"beta": "beta", "threshold": "threshold"}),
    (nn.Threshold, "threshold", {"threshold": "threshold", "value": "value"}),
    (nn.Softshrink, "softshrink", {"lambd": "lambd"}), (nn.Hardshrink, "hardshrink", {"lambd": "lambd"}),
    (nn.Softmax, "softmax", {"dim": "dim"}), (nn.LogSoftmax, "log_softmax", {"dim": "dim"}),
]


class _Unsupported(Exception):
    """A node that cannot be normalised; its message becomes the node's `note`."""


def trace(path: str) -> dict:
    """The `trace` answer for a problem file (docs/worker-protocol.md)."""
    module = problem_loader.import_problem(path)
    try:
        model, model_on = _build_model(module, path)
        values, inputs_on = _build_inputs(module, path)
        return dict(_trace_model(model, values), model_on=model_on.type, inputs_on=inputs_on.type)
    finally:
        sys.modules.pop(module.__name__, None)


def _build_model(module, path: str):
    meta = torch.device("meta")
    try:
        with meta:
            model, _ = problem_loader.build_model(module, path, meta, 0)
        return model, meta
    except ProblemError:
        cpu = torch.device("cpu")
        model, _ = problem_loader.build_model(module, path, cpu, 0)  # its error is the problem's own
        return model, cpu


def _build_inputs(module, path: str):
    meta = torch.device("meta")
    try:
        return problem_loader.call_get_inputs(module, path, 0, meta, on_device=True), meta
    except ProblemError:
        pass  # e.g. get_inputs() reads tensor values: build them for real
    cpu = torch.device("cpu")
    return problem_loader.call_get_inputs(module, path, 0, cpu, on_device=False), cpu


def _trace_model(model: nn.Module, values: list) -> dict:
    try:
        gm = fx.symbolic_trace(model)
    except Exception as exc:  # anything fx raises: the answer carries it as the reason
        return {"traced": False, "reason": f"torch.fx cannot trace forward(): {type(exc).__name__}: {_short(exc)}"}
    try:
        values = [v.to("meta") if isinstance(v, torch.Tensor) else v for v in values]
        ShapeProp(gm.to("meta")).propagate(*values)
    except Exception as exc:
        return {"traced": False,
                "reason": f"the traced graph does not run on meta tensors: {type(exc).__name__}: {_short(exc)}"}
    return dict(traced=True, **_Normaliser(gm, model, values).graph())


def _short(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:300] + " ..."


class _Normaliser:
    def __init__(self, gm: fx.GraphModule, model: nn.Module, values: list):
        self.gm, self.model, self.values = gm, model, values
        self.ids = {}        # fx node -> our id
        self.alias = {}      # fx node mutated in place -> the node holding its new value
        self.nodes = []
        named = list(model.named_parameters()) + list(model.named_buffers())
        self.param_index = {name: len(values) + i for i, (name, _) in enumerate(named)}

    def graph(self) -> dict:
        outputs = []
        placeholder = 0
        for node in self.gm.graph.nodes:
            if node.op == "output":
                result = node.args[0]
                items = result if isinstance(result, (tuple, list)) else [result]
                outputs = [self.operand(v) for v in items]
                continue
            entry = {"id": len(self.nodes), "name": node.name}
            if node.op == "placeholder":
                entry.update(self.placeholder(node, placeholder))
                placeholder += 1
            elif node.op == "get_attr":
                entry.update(self.attribute(node))
            else:
                entry.update(self.operation(node))
            meta = node.meta.get("tensor_meta")
            if isinstance(meta, TensorMetadata):
                entry["dtype"] = _dtype(meta.dtype)
                entry["shape"] = list(meta.shape)
                entry["contiguous"] = meta.memory_format == torch.contiguous_format
            self.ids[node] = entry["id"]
            self.nodes.append(entry)
            if entry.get("inplace") and node.args and isinstance(node.args[0], fx.Node):
                self.alias[self._resolve(node.args[0])] = node  # later uses see the mutated value
        return {"nodes": self.nodes, "outputs": outputs, "num_inputs": len(self.values),
                "params": list(self.param_index)}

    def _resolve(self, node: fx.Node) -> fx.Node:
        while node in self.alias:
            node = self.alias[node]
        return node

    def operand(self, value) -> dict:
        if isinstance(value, fx.Node):
            return {"ref": self.ids[self._resolve(value)]}
        if isinstance(value, bool):
            return {"const": value}
        if isinstance(value, (int, float)):
            return {"const": value if math.isfinite(value) else str(value)}
        raise _Unsupported(f"an operand of type {type(value).__name__}")

    def placeholder(self, node: fx.Node, index: int) -> dict:
        if index < len(self.values):
            value = self.values[index]
            entry = {"op": "input", "index": index}
            if not isinstance(value, torch.Tensor):
                entry.update({"scalar": True, "dtype": "bool" if isinstance(value, bool) else
                              "int64" if isinstance(value, int) else "float64"})
            return entry
        default = node.args[0] if node.args else None  # forward(x, k=2) with get_inputs() giving only x
        if isinstance(default, (int, float, bool)):
            return {"op": "constant", "params": {"value": default if math.isfinite(default) else str(default)}}
        return {"op": "constant", "known": False, "note": f"forward() argument {node.name!r} defaults to {default!r}"}

    def attribute(self, node: fx.Node) -> dict:
        if node.target in self.param_index:
            return {"op": "param", "index": self.param_index[node.target], "param": node.target}
        return {"op": "tensor_constant", "note": f"a tensor attribute {node.target!r} that is neither a parameter "
                                                 "nor a buffer"}

    def operation(self, node: fx.Node) -> dict:
        found = self.canonical(node)
        if found is None:
            return {"op": _display_name(node, self.gm), "args": self.refs_in(node), "known": False}
        name, inplace, params, module_params = found
        try:
            if name == "rsub":  # torch.rsub(a, b, alpha) = b - alpha * a
                entry = self.bind(node, "sub", BINARY["sub"], inplace, module_params)
                entry["args"].reverse()
            elif name in BINARY:
                entry = self.bind(node, name, params, inplace, module_params, operands=2)
            else:
                entry = self.bind(node, name, params, inplace, module_params)
        except _Unsupported as why:
            return {"op": name, "args": self.refs_in(node), "known": False, "note": str(why)}
        return entry

    def canonical(self, node: fx.Node):
        """(name, inplace, parameter table, parameters read from a module) or None."""
        if node.op == "call_function" and node.target in _FUNCTIONS:
            name, inplace = _FUNCTIONS[node.target]
        elif node.op == "call_method" and isinstance(node.target, str):
            base = node.target[:-1] if node.target.endswith("_") and not node.target.startswith("_") else node.target
            base = _METHOD_ALIASES.get(base, base)
            if base not in UNARY and base not in BINARY and base not in ROWWISE:
                return None
            name, inplace = base, node.target.endswith("_")
        elif node.op == "call_module":
            sub = self.gm.get_submodule(node.target)
            for cls, canonical, attrs in _MODULES:
                if isinstance(sub, cls):
                    module_params = {p: getattr(sub, a) for p, a in attrs.items()}
                    table = UNARY.get(canonical, ROWWISE.get(canonical))
                    return canonical, bool(getattr(sub, "inplace", False)), table, module_params
            return None
        else:
            return None
        return name, inplace, UNARY.get(name, BINARY.get(name, ROWWISE.get(name, []))), None

    def bind(self, node, name, table, inplace, module_params, operands=1) -> dict:
        args, kwargs = list(node.args), dict(node.kwargs)
        names = {"input", "self", "other", "exponent"}
        ops = args[:operands]
        for key in ("input", "self", "other", "exponent"):
            if key in kwargs and len(ops) < operands:
                ops.append(kwargs.pop(key))
        if len(ops) != operands:
            raise _Unsupported(f"{name} expects {operands} operand(s)")
        params = dict(module_params or {})
        if module_params is None:
            rest = args[operands:]
            if len(rest) > len(table):
                raise _Unsupported(f"{name} got {len(rest)} positional arguments")
            for (pname, _), value in zip(table, rest):
                params[pname] = value
            for key, value in kwargs.items():
                if key not in dict(table) or key in names:
                    raise _Unsupported(f"{name} got an unexpected argument {key!r}")
                params[key] = value
            for pname, default in table:
                if pname not in params:
                    if default is _REQUIRED:
                        raise _Unsupported(f"{name} is missing its argument {pname!r}")
                    params[pname] = default
        inplace = bool(inplace or params.pop("inplace", False))
        params.pop("_stacklevel", None)  # F.softmax's warning depth: nothing to do with the result
        for pname, value in params.items():
            if isinstance(value, fx.Node):
                raise _Unsupported(f"{name}'s {pname} is a tensor, not a number")
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise _Unsupported(f"{name}'s {pname} is a {type(value).__name__}")
            if isinstance(value, float) and not math.isfinite(value):
                params[pname] = str(value)
        entry = {"op": name, "args": [self.operand(v) for v in ops], "params": params}
        if inplace:
            entry["inplace"] = True
        return entry

    def refs_in(self, node: fx.Node) -> list:
        refs = []
        fx.node.map_arg((node.args, node.kwargs), lambda n: refs.append({"ref": self.ids[self._resolve(n)]}))
        return refs


def _dtype(dtype: torch.dtype) -> str:
    try:
        return dtype_name(dtype)
    except ProblemError:
        return str(dtype).replace("torch.", "")


def _display_name(node: fx.Node, gm: fx.GraphModule) -> str:
    """How a person would spell an op the normaliser does not know: torch.matmul, Tensor.view, nn.Conv2d."""
    if node.op == "call_module":
        return f"nn.{type(gm.get_submodule(node.target)).__name__}"
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    name = getattr(node.target, "__name__", str(node.target))
    owner = getattr(node.target, "__module__", None) or ""
    if owner.startswith("torch.nn.functional"):
        return f"F.{name}"
    if owner.startswith("torch"):
        return f"torch.{name}"
    if owner in ("_operator", "operator"):
        return f"operator.{name}"
    return name
