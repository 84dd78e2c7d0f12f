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
# Reductions over a dimension (`dim` None: over everything; a list: several at once, MULTI_DIM): one tensor
# operand. `max`/`min` with a dim return torch's (values, indices) pair, read by a `getitem`; with a second
# tensor they are maximum/minimum.
REDUCE = {
    "sum": [("dim", None), ("keepdim", False), ("dtype", None)],
    "mean": [("dim", None), ("keepdim", False), ("dtype", None)],
    "prod": [("dim", None), ("keepdim", False), ("dtype", None)],
    "amax": [("dim", None), ("keepdim", False)], "amin": [("dim", None), ("keepdim", False)],
    "argmax": [("dim", None), ("keepdim", False)], "argmin": [("dim", None), ("keepdim", False)],
    "max": [("dim", None), ("keepdim", False)], "min": [("dim", None), ("keepdim", False)],
    "norm": [("p", "fro"), ("dim", None), ("keepdim", False), ("out", None), ("dtype", None)],
    "logsumexp": [("dim", _REQUIRED), ("keepdim", False)],
}
# The reductions torch lets take several dimensions at once (`dim=(2, 3)`): their `dim` is then a list.
MULTI_DIM = {"sum", "mean", "amax", "amin", "logsumexp"}
# Loss functions: (input, target), then scalar parameters (a tensor `weight` is refused as a tensor).
_LEGACY = [("size_average", None), ("reduce", None)]
LOSS = {
    "mse_loss": _LEGACY + [("reduction", "mean"), ("weight", None)],
    "l1_loss": _LEGACY + [("reduction", "mean"), ("weight", None)],
    "smooth_l1_loss": _LEGACY + [("reduction", "mean"), ("beta", 1.0)],
    "huber_loss": [("reduction", "mean"), ("delta", 1.0), ("weight", None)],
    "kl_div": _LEGACY + [("reduction", "mean"), ("log_target", False)],
    "cross_entropy": [("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
                      ("reduction", "mean"), ("label_smoothing", 0.0)],
}
# The triplet margin loss: (anchor, positive, negative), then its scalar parameters (F.triplet_margin_loss's order).
# torch.triplet_margin_loss, whose reduction is an enum number, is not traced: it stays torch's spelling.
TRIPLET = {
    "triplet_margin_loss": [("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False)] + _LEGACY
    + [("reduction", "mean")],
}
# Scans over one dimension.
SCAN = {"cumsum": [("dim", _REQUIRED), ("dtype", None)], "cumprod": [("dim", _REQUIRED), ("dtype", None)]}
# Layout and matrix ops: operands, then scalar parameters.
MATRIX = {
    "matmul": [], "transpose": [("dim0", _REQUIRED), ("dim1", _REQUIRED)], "flip": [("dims", _REQUIRED)],
    "triu": [("diagonal", 0)], "tril": [("diagonal", 0)], "unsqueeze": [("dim", _REQUIRED)],
}
# Two operands (tensor or number each), then scalar parameters.
BINARY = {
    "add": [("alpha", 1)], "sub": [("alpha", 1)], "mul": [], "div": [("rounding_mode", None)],
    "pow": [], "maximum": [], "minimum": [],
}

_SIMPLE = [n for n in UNARY if n not in ("identity",)] + list(BINARY) + list(ROWWISE) + list(REDUCE) + list(LOSS) + list(SCAN) + ["triu", "tril", "flip", "unsqueeze"]

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
    torch.matmul: ("matmul", False), torch.mm: ("matmul", False), torch.bmm: ("matmul", False),
    operator.matmul: ("matmul", False), torch.transpose: ("transpose", False), torch.swapaxes: ("transpose", False),
    torch.t: ("t", False), torch.einsum: ("einsum", False), operator.getitem: ("getitem", False),
    F.linear: ("linear", False), F.triplet_margin_loss: ("triplet_margin_loss", False),
    F.scaled_dot_product_attention: ("scaled_dot_product_attention", False),
    torch.cat: ("cat", False), torch.concat: ("cat", False), torch.concatenate: ("cat", False),
    torch.narrow: ("narrow", False), torch.zeros_like: ("zeros_like", False),
    operator.add: ("add", False), operator.sub: ("sub", False), operator.mul: ("mul", False),
    operator.truediv: ("div", False), operator.pow: ("pow", False), operator.neg: ("neg", False),
    operator.abs: ("abs", False), operator.iadd: ("add", True), operator.isub: ("sub", True),
    operator.imul: ("mul", True), operator.itruediv: ("div", True),
})

_METHOD_ALIASES = {"clip": "clamp", "negative": "neg", "multiply": "mul", "divide": "div", "true_divide": "div",
                   "subtract": "sub", "absolute": "abs", "contiguous": "identity", "clone": "identity",
                   "detach": "identity", "mm": "matmul", "bmm": "matmul", "swapaxes": "transpose"}

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
    (nn.MSELoss, "mse_loss", {"reduction": "reduction"}), (nn.L1Loss, "l1_loss", {"reduction": "reduction"}),
    (nn.SmoothL1Loss, "smooth_l1_loss", {"reduction": "reduction", "beta": "beta"}),
    (nn.HuberLoss, "huber_loss", {"reduction": "reduction", "delta": "delta"}),
    (nn.KLDivLoss, "kl_div", {"reduction": "reduction", "log_target": "log_target"}),
    (nn.TripletMarginLoss, "triplet_margin_loss",
     {"margin": "margin", "p": "p", "eps": "eps", "swap": "swap", "reduction": "reduction"}),
]
# Normalisation modules -> (canonical op, {param: attribute}); their weight and bias become param operands.
_NORM_MODULES = [
    (nn.LayerNorm, "layer_norm", {"eps": "eps", "affine": "elementwise_affine"}),
    (nn.GroupNorm, "group_norm", {"eps": "eps", "affine": "affine", "num_groups": "num_groups"}),
    (nn.modules.instancenorm._InstanceNorm, "instance_norm",
     {"eps": "eps", "affine": "affine", "track_running_stats": "track_running_stats", "training": "training"}),
    (nn.modules.batchnorm._BatchNorm, "batch_norm",
     {"eps": "eps", "affine": "affine", "track_running_stats": "track_running_stats", "training": "training"}),
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
    # fx keeps `torch.tensor(0.5)` in forward() as a buffer of the traced module: its value, before the move
    # to the meta device below takes it.
    numbers = {name: _number_of_0d(b) for name, b in gm.named_buffers()}
    try:
        values = [v.to("meta") if isinstance(v, torch.Tensor) else v for v in values]
        ShapeProp(gm.to("meta")).propagate(*values)
    except Exception as exc:
        return {"traced": False,
                "reason": f"the traced graph does not run on meta tensors: {type(exc).__name__}: {_short(exc)}"}
    return dict(traced=True, **_Normaliser(gm, model, values, numbers).graph())


def _number_of_0d(t: torch.Tensor):
    """The value of a 0-d float or integer tensor that holds real data, as JSON writes numbers; else None."""
    if t.dim() != 0 or t.is_meta or t.dtype == torch.bool or t.is_complex():
        return None
    value = t.item()
    return value if math.isfinite(value) else str(value)


def _short(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:300] + " ..."


class _Normaliser:
    def __init__(self, gm: fx.GraphModule, model: nn.Module, values: list, numbers: dict):
        self.gm, self.model, self.values = gm, model, values
        self.numbers = numbers  # the traced module's 0-d tensor constants: name -> value (None: not a number)
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
            entry = {"id": None, "name": node.name}
            if node.op == "placeholder":
                entry.update(self.placeholder(node, placeholder))
                placeholder += 1
            elif node.op == "get_attr":
                entry.update(self.attribute(node))
            else:
                entry.update(self.operation(node))
            entry["id"] = len(self.nodes)  # after the param nodes a normalisation module adds
            meta = node.meta.get("tensor_meta")
            if isinstance(meta, TensorMetadata) and entry["op"] != "constant":  # a number has no tensor type
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
        number = self.numbers.get(node.target)
        if number is not None:  # `torch.tensor(0.5)` in forward()
            return {"op": "constant", "params": {"value": number}}
        return {"op": "tensor_constant", "note": f"a tensor attribute {node.target!r} that is neither a parameter "
                                                 "nor a buffer"}

    def tensor_of_number(self, node: fx.Node):
        """`torch.tensor(0.0, device=x.device)` in forward() as a `constant`, or None. A 0-d tensor takes part
        in an op with a tensor as a number would, so its value is all the seed needs."""
        if node.op != "call_function" or node.target is not torch.tensor or len(node.args) != 1 \
                or not isinstance(node.args[0], (int, float)) or isinstance(node.args[0], bool) \
                or not set(node.kwargs) <= {"device", "dtype", "requires_grad"}:
            return None
        dtype = node.kwargs.get("dtype")
        if dtype is not None and not isinstance(dtype, torch.dtype):
            return None
        number = _number_of_0d(torch.tensor(node.args[0], dtype=dtype))
        return None if number is None else {"op": "constant", "params": {"value": number}}

    def operation(self, node: fx.Node) -> dict:
        folded = self.tensor_of_number(node)
        if folded is not None:
            return folded
        found = self.canonical(node)
        if found is None:
            return {"op": _display_name(node, self.gm), "args": self.refs_in(node), "known": False}
        name, inplace, params, module_params = found
        try:
            if name == "rsub":  # torch.rsub(a, b, alpha) = b - alpha * a
                entry = self.bind(node, "sub", BINARY["sub"], inplace, module_params)
                entry["args"].reverse()
            elif name in ("max", "min") and len(node.args) > 1 and isinstance(node.args[1], fx.Node):
                entry = self.bind(node, "maximum" if name == "max" else "minimum", [], inplace, None, operands=2)
            elif name in BINARY or name in LOSS or name == "matmul":
                entry = self.bind(node, name, params, inplace, module_params, operands=2)
            elif name in TRIPLET:
                entry = self.bind(node, name, params, inplace, module_params, operands=3,
                                  operand_names=("anchor", "positive", "negative"))
            elif name == "pool":
                entry = self.pool_module(node)
            elif name == "conv":
                entry = self.conv_module(node)
            elif name == "adaptive_avg_pool":
                entry = self.adaptive_avg_pool(node)
            elif name == "linear":
                entry = self.linear(node)
            elif name in _SPECIAL:
                entry = _SPECIAL[name](self, node)
            elif name in _NORMS:
                entry = self.norm_module(node, name, module_params)
            else:
                entry = self.bind(node, name, params, inplace, module_params)
        except _Unsupported as why:
            return {"op": name, "args": self.refs_in(node), "known": False, "note": str(why)}
        return entry

    def norm_module(self, node: fx.Node, name: str, module_params: dict) -> dict:
        """A normalisation module: x, then its weight and bias (when affine) as param nodes of their own."""
        if len(node.args) != 1 or node.kwargs:
            raise _Unsupported(f"{name} expects one operand")
        sub = self.gm.get_submodule(node.target)
        params = {k: v for k, v in module_params.items()}
        args = [self.operand(node.args[0])]
        for attr in ("weight", "bias"):
            tensor = getattr(sub, attr, None)
            if isinstance(tensor, nn.Parameter):
                args.append({"ref": self.param_node(f"{node.target}.{attr}", tensor)})
            params[f"has_{attr}"] = isinstance(tensor, nn.Parameter)
        if name == "layer_norm":
            params["normalized_ndim"] = len(sub.normalized_shape)
        return {"op": name, "args": args, "params": params}

    def linear(self, node: fx.Node) -> dict:
        """nn.Linear or F.linear: y = x @ weight.T (+ bias), as linear(x, weight[, bias]) with `has_bias`.
        The module's weight and bias become param nodes of their own, as a norm module's do."""
        if node.op == "call_module":
            if len(node.args) != 1 or node.kwargs:
                raise _Unsupported("nn.Linear expects one operand")
            sub = self.gm.get_submodule(node.target)
            args = [self.operand(node.args[0]), {"ref": self.param_node(f"{node.target}.weight", sub.weight)}]
            if sub.bias is not None:
                args.append({"ref": self.param_node(f"{node.target}.bias", sub.bias)})
        else:
            names = ("input", "weight", "bias")
            if len(node.args) > 3 or set(node.kwargs) - set(names):
                raise _Unsupported("F.linear expects (input, weight, bias)")
            bound = dict(zip(names, node.args), **node.kwargs)
            if "input" not in bound or "weight" not in bound:
                raise _Unsupported("F.linear expects (input, weight, bias)")
            values = [bound[k] for k in names if bound.get(k) is not None]
            for value in values:
                if not isinstance(value, fx.Node):
                    raise _Unsupported("F.linear of something that is not a tensor")
            args = [self.operand(v) for v in values]
        return {"op": "linear", "args": args, "params": {"has_bias": len(args) == 3}}

    def pool_module(self, node: fx.Node) -> dict:
        """nn.MaxPool1d..3d / nn.AvgPool1d..3d: per-dimension window numbers as k0, s0, p0, d0, k1, ..."""
        if len(node.args) != 1 or node.kwargs:
            raise _Unsupported("a pooling module expects one operand")
        sub = self.gm.get_submodule(node.target)
        name, dims = _POOLS[type(sub)]
        params = {"dims": dims, "ceil_mode": bool(sub.ceil_mode)}
        params.update(_window(name, dims, {"k": sub.kernel_size, "s": sub.stride if sub.stride is not None
                                           else sub.kernel_size, "p": sub.padding, "d": getattr(sub, "dilation", 1)}))
        if name == "max_pool":
            params["return_indices"] = bool(sub.return_indices)
        else:
            params["count_include_pad"] = bool(sub.count_include_pad)
            params["divisor_override"] = getattr(sub, "divisor_override", None)  # AvgPool1d has none
        return {"op": name, "args": [self.operand(node.args[0])], "params": params}

    def adaptive_avg_pool(self, node: fx.Node) -> dict:
        """nn.AdaptiveAvgPool1d..3d or F.adaptive_avg_pool1d..3d to output size 1 (a global average pool): the
        mean over the pooled dimensions, the last `dims` of the input, with keepdim -- the same values in the
        same shape, so every route that takes a mean takes it. Any other output size is refused."""
        if node.op == "call_module":
            if len(node.args) != 1 or node.kwargs:
                raise _Unsupported("an adaptive pooling module expects one operand")
            dims = _ADAPTIVE_AVG_POOLS[type(self.gm.get_submodule(node.target))]
            source, size = node.args[0], self.gm.get_submodule(node.target).output_size
        else:
            dims = _ADAPTIVE_AVG_POOL_FUNCTIONS[node.target]
            bound = dict(zip(("input", "output_size"), node.args), **node.kwargs)
            if len(node.args) > 2 or set(bound) != {"input", "output_size"}:
                raise _Unsupported(f"adaptive_avg_pool{dims}d expects (input, output_size)")
            source, size = bound["input"], bound["output_size"]
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dims
        if len(sizes) != dims or any(s != 1 or type(s) is not int for s in sizes):
            raise _Unsupported(f"adaptive_avg_pool{dims}d to output size {size!r} (only 1, a global average, is "
                               "traced: as a mean)")
        meta = source.meta.get("tensor_meta") if isinstance(source, fx.Node) else None
        if not isinstance(meta, TensorMetadata):
            raise _Unsupported(f"adaptive_avg_pool{dims}d of something that is not a tensor")
        rank = len(meta.shape)
        pooled = list(range(rank - dims, rank))
        return {"op": "mean", "args": [self.operand(source)],
                "params": {"dim": pooled[0] if dims == 1 else pooled, "keepdim": True, "dtype": None}}

    def conv_module(self, node: fx.Node) -> dict:
        """nn.Conv1d..3d: conv(x, weight[, bias]) with the window per dimension as k0, s0, p0, d0, k1, ...,
        `groups`, the channel counts and `has_bias`; the weight and bias become param nodes of their own.
        nn.ConvTranspose1d..3d: conv_transpose(...) the same way, plus output_padding as o0, o1, ... (its
        weight is (in_channels, out_channels / groups, window...)). A separate op name, so a route written
        for forward convolutions cannot take a transposed one by mistake."""
        if len(node.args) != 1 or node.kwargs:
            raise _Unsupported("a convolution module expects one operand")
        sub = self.gm.get_submodule(node.target)
        name, dims = _CONVS[type(sub)]
        if sub.padding_mode != "zeros":
            raise _Unsupported(f"padding_mode={sub.padding_mode!r} (only zero padding)")
        if isinstance(sub.padding, str):
            raise _Unsupported(f"padding={sub.padding!r} (only explicit padding)")
        params = {"dims": dims, "groups": sub.groups, "in_channels": sub.in_channels,
                  "out_channels": sub.out_channels, "has_bias": sub.bias is not None}
        window = {"k": sub.kernel_size, "s": sub.stride, "p": sub.padding, "d": sub.dilation}
        if name == "conv_transpose":
            window["o"] = sub.output_padding
        params.update(_window(name, dims, window))
        args = [self.operand(node.args[0]), {"ref": self.param_node(f"{node.target}.weight", sub.weight)}]
        if sub.bias is not None:
            args.append({"ref": self.param_node(f"{node.target}.bias", sub.bias)})
        return {"op": name, "args": args, "params": params}

    def param_node(self, qualified: str, tensor: torch.Tensor) -> int:
        if qualified not in self.param_index:
            raise _Unsupported(f"{qualified} is not among the model's parameters")
        entry = {"id": len(self.nodes), "name": qualified.replace(".", "_"), "op": "param",
                 "index": self.param_index[qualified], "param": qualified, "dtype": _dtype(tensor.dtype),
                 "shape": list(tensor.shape), "contiguous": tensor.is_contiguous()}
        self.nodes.append(entry)
        return entry["id"]

    def getitem(self, node: fx.Node) -> dict:
        """`torch.max(x, dim)[0]`: an element of an op's tuple result. Indexing a tensor is not this."""
        source, index = node.args
        if not isinstance(source, fx.Node) or isinstance(source.meta.get("tensor_meta"), TensorMetadata) \
                or not isinstance(index, int):
            raise _Unsupported("indexing a tensor")
        return {"op": "getitem", "args": [self.operand(source)], "params": {"index": index}}

    def attribute_access(self, node: fx.Node) -> dict:
        """`A.T` and `A.mT` are transposes; `torch.max(x, dim).values` (`.indices`) is the pair's element 0 (1);
        any other attribute is not an op the seed knows."""
        source, attr = node.args
        meta = source.meta.get("tensor_meta") if isinstance(source, fx.Node) else None
        if attr in ("values", "indices") and isinstance(source, fx.Node) and meta is not None \
                and not isinstance(meta, TensorMetadata):
            return {"op": "getitem", "args": [self.operand(source)], "params": {"index": int(attr == "indices")}}
        rank = len(meta.shape) if isinstance(meta, TensorMetadata) else -1
        if attr == "mT" or (attr == "T" and rank == 2):
            return {"op": "transpose", "args": [self.operand(source)], "params": {"dim0": -2, "dim1": -1}}
        raise _Unsupported(f"the attribute {attr!r}" + (f" of a {rank}-d tensor" if attr == "T" else ""))

    def cat(self, node: fx.Node) -> dict:
        """torch.cat (concat, concatenate) of a list of tensors along `dim`: the tensors are its operands."""
        bound = dict(zip(("tensors", "dim"), node.args), **node.kwargs)
        if len(node.args) > 2 or not set(bound) <= {"tensors", "dim"} or "tensors" not in bound:
            raise _Unsupported("cat expects (tensors, dim)")
        tensors, dim = bound["tensors"], bound.get("dim", 0)
        if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, fx.Node) for t in tensors):
            raise _Unsupported("cat of something that is not a list of tensors")
        if type(dim) is not int:
            raise _Unsupported(f"cat's dim is {dim!r}, not a number")
        return {"op": "cat", "args": [self.operand(t) for t in tensors], "params": {"dim": dim}}

    def narrow(self, node: fx.Node) -> dict:
        """torch.narrow / Tensor.narrow(dim, start, length). A length computed from a size (`x.size(d) - 1`) is
        traced as an fx node: the narrowed extent is the node's own size along dim, so it is read from there."""
        bound = dict(zip(("input", "dim", "start", "length"), node.args), **node.kwargs)
        if len(node.args) > 4 or set(bound) != {"input", "dim", "start", "length"}:
            raise _Unsupported("narrow expects (input, dim, start, length)")
        dim, start, length = bound["dim"], bound["start"], bound["length"]
        if type(dim) is not int or type(start) is not int:
            raise _Unsupported("narrow's dim and start must be numbers written in forward()")
        meta = node.meta.get("tensor_meta")
        if isinstance(length, fx.Node) and isinstance(meta, TensorMetadata) and -len(meta.shape) <= dim < len(meta.shape):
            length = int(meta.shape[dim])
        if type(length) is not int:
            raise _Unsupported("narrow's length is not a number")
        return {"op": "narrow", "args": [self.operand(bound["input"])],
                "params": {"dim": dim, "start": start, "length": length}}

    def zeros_like(self, node: fx.Node) -> dict:
        """torch.zeros_like(t, ...): zeros of t's shape; the node's own type (dtype included) says all of it, and
        its operand is kept only to show where the shape came from."""
        if len(node.args) != 1 or not isinstance(node.args[0], fx.Node) \
                or not set(node.kwargs) <= {"dtype", "device", "layout", "requires_grad", "memory_format"}:
            raise _Unsupported("zeros_like expects one tensor")
        return {"op": "zeros_like", "args": [self.operand(node.args[0])], "params": {}}

    def t(self, node: fx.Node) -> dict:
        if len(node.args) != 1:
            raise _Unsupported("t expects one operand")
        return {"op": "transpose", "args": [self.operand(node.args[0])], "params": {"dim0": -2, "dim1": -1}}

    def einsum(self, node: fx.Node) -> dict:
        """An einsum that is a matrix product over its operands' last/first index ("bijl,lk->bijk")."""
        equation, *operands = node.args
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
        equation = equation.replace(" ", "") if isinstance(equation, str) else ""
        lhs, _, out = equation.partition("->")
        terms = lhs.split(",")
        if len(terms) == 2 and len(operands) == 2 and "." not in equation and len(terms[1]) == 2:
            a, b = terms
            letters = a + b[1]
            if (len(set(letters)) == len(letters) and a and a[-1] == b[0] and out == a[:-1] + b[1]):
                return {"op": "matmul", "args": [self.operand(v) for v in operands], "params": {}}
        raise _Unsupported(f"einsum {equation!r} is not a matrix product")

    def attention(self, node: fx.Node) -> dict:
        """F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa) as
        one op: query, key and value (and a tensor attn_mask, flagged by `has_attn_mask`) as operands, the rest
        bound by name with torch's defaults. The trace says what forward() called; which arguments the seed
        lowers into products and a softmax is the C++ side's decision (src/seed/attention_lowering.h)."""
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
        if len(node.args) > len(names) or set(node.kwargs) - set(names):
            raise _Unsupported("scaled_dot_product_attention got an unexpected argument")
        bound = dict(zip(names, node.args), **node.kwargs)
        operands = [bound.get(k) for k in ("query", "key", "value")]
        if not all(isinstance(v, fx.Node) for v in operands):
            raise _Unsupported("scaled_dot_product_attention of something that is not a tensor")
        mask = bound.get("attn_mask")
        if mask is not None and not isinstance(mask, fx.Node):
            raise _Unsupported(f"scaled_dot_product_attention's attn_mask is a {type(mask).__name__}")
        params = {"has_attn_mask": mask is not None}
        for pname, default in (("dropout_p", 0.0), ("is_causal", False), ("scale", None), ("enable_gqa", False)):
            value = bound.get(pname, default)
            if value is not None and not isinstance(value, (bool, int, float)):
                raise _Unsupported(f"scaled_dot_product_attention's {pname} is a {type(value).__name__}, not a number")
            params[pname] = value if not isinstance(value, float) or math.isfinite(value) else str(value)
        args = [self.operand(v) for v in operands + ([mask] if mask is not None else [])]
        return {"op": "scaled_dot_product_attention", "args": args, "params": params}

    def canonical(self, node: fx.Node):
        """(name, inplace, parameter table, parameters read from a module) or None."""
        if node.op == "call_function" and node.target in _FUNCTIONS:
            name, inplace = _FUNCTIONS[node.target]
        elif node.op == "call_function" and node.target in _ADAPTIVE_AVG_POOL_FUNCTIONS:
            name, inplace = "adaptive_avg_pool", False
        elif node.op == "call_function" and node.target is getattr:
            name, inplace = "getattr", False
        elif node.op == "call_method" and isinstance(node.target, str):
            base = node.target[:-1] if node.target.endswith("_") and not node.target.startswith("_") else node.target
            base = _METHOD_ALIASES.get(base, base)
            if not _table(base) and base not in UNARY and base not in BINARY and base not in ROWWISE \
                    and base not in REDUCE and base not in MATRIX and base not in ("t", "narrow"):
                return None
            name, inplace = base, node.target.endswith("_")
        elif node.op == "call_module":
            sub = self.gm.get_submodule(node.target)
            if type(sub) in _POOLS:
                return "pool", False, [], None
            if type(sub) in _ADAPTIVE_AVG_POOLS:
                return "adaptive_avg_pool", False, [], None
            if type(sub) in _CONVS:
                return "conv", False, [], None  # conv_module names it conv or conv_transpose
            if isinstance(sub, nn.Linear):
                return "linear", False, [], None
            for cls, canonical, attrs in _MODULES + _NORM_MODULES:
                if isinstance(sub, cls):
                    module_params = {p: getattr(sub, a) for p, a in attrs.items()}
                    table = _table(canonical)
                    return canonical, bool(getattr(sub, "inplace", False)), table, module_params
            return None
        else:
            return None
        return name, inplace, _table(name), None

    def bind(self, node, name, table, inplace, module_params, operands=1,
             operand_names=("input", "self", "other", "exponent")) -> dict:
        args, kwargs = list(node.args), dict(node.kwargs)
        names = set(operand_names)
        ops = args[:operands]
        for key in operand_names:
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
        for key in ("dim", "dims"):  # sum(x, dim=(1,)), flip(x, [1]): one dimension is still one
            if isinstance(params.get(key), (list, tuple)):
                dims = list(params[key])
                if len(dims) == 1:
                    params[key] = dims[0]
                elif key == "dim" and name in MULTI_DIM and dims and all(type(d) is int for d in dims):
                    params[key] = dims  # a list of several: the C++ side refuses where it reads one dimension
                else:
                    raise _Unsupported(f"{name} over {len(dims)} dimensions at once")
        for pname, value in params.items():
            if isinstance(value, fx.Node):
                raise _Unsupported(f"{name}'s {pname} is a tensor, not a number")
            if pname == "dim" and isinstance(value, list):
                continue  # the dimensions of a MULTI_DIM reduction, checked above
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


def _window(name: str, dims: int, window: dict) -> dict:
    """A pooling's or convolution's window numbers ({"k": 3, "s": (2, 1), ...}) per dimension: k0, k1, s0, ..."""
    params = {}
    for key, value in window.items():
        values = list(value) if isinstance(value, (list, tuple)) else [value] * dims
        if len(values) != dims or not all(isinstance(v, int) for v in values):
            raise _Unsupported(f"{name}'s {key} is {value!r}")
        for i, v in enumerate(values):
            params[f"{key}{i}"] = v
    return params


def _table(name: str) -> list:
    for table in (UNARY, BINARY, ROWWISE, REDUCE, MATRIX, LOSS, TRIPLET, SCAN):
        if name in table:
            return table[name]
    return []


_SPECIAL = {"getitem": _Normaliser.getitem, "getattr": _Normaliser.attribute_access, "t": _Normaliser.t,
            "einsum": _Normaliser.einsum, "cat": _Normaliser.cat, "narrow": _Normaliser.narrow,
            "zeros_like": _Normaliser.zeros_like, "scaled_dot_product_attention": _Normaliser.attention}
_NORMS = {canonical for _, canonical, _ in _NORM_MODULES}
# Convolutions (not transposed ones): their window per dimension, like a pooling's.
_CONVS = {nn.Conv1d: ("conv", 1), nn.Conv2d: ("conv", 2), nn.Conv3d: ("conv", 3),
          nn.ConvTranspose1d: ("conv_transpose", 1), nn.ConvTranspose2d: ("conv_transpose", 2),
          nn.ConvTranspose3d: ("conv_transpose", 3)}
# Adaptive average pooling, traced as a mean when its output size is 1: the pooled dimensions.
_ADAPTIVE_AVG_POOLS = {nn.AdaptiveAvgPool1d: 1, nn.AdaptiveAvgPool2d: 2, nn.AdaptiveAvgPool3d: 3}
_ADAPTIVE_AVG_POOL_FUNCTIONS = {F.adaptive_avg_pool1d: 1, F.adaptive_avg_pool2d: 2, F.adaptive_avg_pool3d: 3,
                                torch.adaptive_avg_pool1d: 1}
_POOLS = {nn.MaxPool1d: ("max_pool", 1), nn.MaxPool2d: ("max_pool", 2), nn.MaxPool3d: ("max_pool", 3),
          nn.AvgPool1d: ("avg_pool", 1), nn.AvgPool2d: ("avg_pool", 2), nn.AvgPool3d: ("avg_pool", 3)}


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
