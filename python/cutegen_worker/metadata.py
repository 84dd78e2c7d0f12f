"""What the forward pass does: the aten ops it runs, its workload class, FLOPs and minimum bytes.

Ops are recorded with a TorchDispatchMode, so they are the ops after autograd and composite
decomposition (torch.matmul shows up as aten::mm, nn.Linear as aten::t + aten::addmm).
"""
import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_GEMM = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "matmul", "linear",
         "_scaled_mm", "_int_mm"}
_REDUCTION = {"sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "cumsum", "cumprod",
              "norm", "linalg_vector_norm", "var", "std", "var_mean", "std_mean", "logsumexp", "all", "any",
              "native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
              "_native_batch_norm_legit_no_training", "_fused_rms_norm", "nansum", "count_nonzero",
              "_softmax", "_log_softmax", "softmax", "log_softmax", "cummax", "cummin", "logcumsumexp"}
_SOFTMAX = {"_softmax", "_log_softmax", "softmax", "log_softmax"}
# Ops that only move or create data: no FLOPs, and alone they make an elementwise (memory-bound) problem.
_DATA = {"clone", "copy_", "_to_copy", "contiguous", "cat", "stack", "empty", "empty_like", "empty_strided",
         "new_empty", "new_empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
         "fill_", "zero_", "fill", "lift_fresh", "lift_fresh_copy", "detach", "_unsafe_view", "alias",
         "scalar_tensor", "arange", "resize_", "_local_scalar_dense", "constant_pad_nd"}


def _base_name(func) -> str:
    return func._schema.name.split("::", 1)[-1]


def _is_view(func) -> bool:
    # A view returns an alias of an input (the schema says `Tensor(a)`) without writing to it.
    returns = func._schema.returns
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


def _is_pointwise(func) -> bool:
    return torch.Tag.pointwise in func.tags


def op_category(func) -> str:
    """gemm | conv | attention | reduction | pointwise | view | data | other."""
    name = _base_name(func)
    if "scaled_dot_product" in name or name.endswith("attention_forward"):
        return "attention"
    if name in _GEMM:
        return "gemm"
    if "convolution" in name:
        return "conv"
    if name in _REDUCTION or getattr(torch.Tag, "reduction", None) in func.tags:
        return "reduction"
    if name in _DATA:
        return "data"
    if _is_view(func):
        return "view"
    if _is_pointwise(func):
        return "pointwise"
    return "other"


def _tensors(values):
    for v in values:
        if isinstance(v, torch.Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _gemm_flops(name: str, args, out) -> int:
    if name in ("mm", "_int_mm", "_scaled_mm"):
        (m, k), n = args[0].shape, args[1].shape[1]
        return 2 * m * n * k
    if name in ("addmm",):
        (m, k), n = args[1].shape, args[2].shape[1]
        return 2 * m * n * k
    if name in ("bmm",):
        (b, m, k), n = args[0].shape, args[1].shape[2]
        return 2 * b * m * n * k
    if name in ("baddbmm", "addbmm"):
        (b, m, k), n = args[1].shape, args[2].shape[2]
        return 2 * b * m * n * k
    if name in ("mv", "dot", "vdot"):
        return 2 * args[0].numel()
    if name == "addmv":
        return 2 * args[1].numel()
    # matmul/linear normally decompose before reaching the mode; estimate from the output and K.
    first = next(_tensors(args))
    return 2 * out.numel() * first.shape[-1]


def _conv_flops(args, out) -> int:
    # aten::convolution(input, weight, bias, stride, padding, dilation, transposed, ...). Every weight
    # element meets every position of the larger side: the output for a convolution, the input for a
    # transposed one.
    x, w = args[0], args[1]
    transposed = bool(args[6]) if len(args) > 6 else False
    spatial = x.shape[2:] if transposed else out.shape[2:]
    return 2 * x.shape[0] * math.prod(spatial) * w.numel()


def _attention_flops(args) -> int:
    q, k, v = args[0], args[1], args[2]
    batch = math.prod(q.shape[:-2])
    lq, d = q.shape[-2], q.shape[-1]
    lk, dv = k.shape[-2], v.shape[-1]
    return 2 * batch * lq * lk * d + 2 * batch * lq * lk * dv


def op_flops(func, category: str, args, out) -> int:
    name = _base_name(func)
    outputs = list(_tensors([out]))
    if category == "gemm":
        return _gemm_flops(name, args, outputs[0])
    if category == "conv":
        return _conv_flops(args, outputs[0])
    if category == "attention":
        return _attention_flops(args)
    if category == "reduction":
        first = next(_tensors(args), None)
        n = first.numel() if first is not None else 0
        return 5 * n if name in _SOFTMAX else n
    if category == "pointwise":
        return outputs[0].numel() if outputs else 0
    return 0


class OpRecorder(TorchDispatchMode):
    """Records (op name, category, FLOPs) of every aten op run while active."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        category = op_category(func)
        self.ops.append((func._schema.name, category, op_flops(func, category, args, out)))
        return out


def aten_ops(recorded) -> list:
    seen = []
    for name, _, _ in recorded:
        if name not in seen:
            seen.append(name)
    return seen


def workload_class(recorded) -> str:
    categories = {category for _, category, _ in recorded}
    for cls, category in (("attention", "attention"), ("conv", "conv"), ("gemm", "gemm"),
                          ("reduction", "reduction")):
        if category in categories:
            return cls
    if "other" in categories or not categories:
        return "other"
    return "elementwise"  # pointwise ops, views and data movement only


def total_flops(recorded) -> int:
    return int(sum(flops for _, _, flops in recorded))


def tensor_bytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def min_bytes(inputs, params, outputs) -> int:
    """Every forward input, parameter and buffer read once, every output written once."""
    return sum(tensor_bytes(t) for t in list(inputs) + list(params) + list(outputs) if isinstance(t, torch.Tensor))
