"""Descriptions of values (metadata entries, scalar refs) and output poisoning.

Tensor refs -- what lets the runner reach a buffer -- are made only by shared_buffers.SharedArena,
for its own dedicated allocations; nothing here can describe a tensor's address.
"""
import torch

from .dtypes import dtype_name


def poison_(t: torch.Tensor) -> torch.Tensor:
    """NaN for floating outputs (what `unwritten` detection looks for); all-ones bytes otherwise,
    as the runner's 0xFF memset leaves them."""
    if t.numel() == 0:
        return t
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.is_contiguous():
        t.view(torch.uint8).fill_(0xFF)
    else:
        t.fill_(True if t.dtype == torch.bool else -1)
    return t


def scalar_ref(value) -> dict:
    """A Python int/float/bool forward argument, passed to the kernel as a host scalar."""
    if isinstance(value, bool):
        return {"kind": "scalar", "dtype": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "scalar", "dtype": "int64", "value": value}
    return {"kind": "scalar", "dtype": "float64", "value": float(value)}


def describe(value, name=None) -> dict:
    """Metadata entry (no buffer address) for an input, parameter or output."""
    entry = {} if name is None else {"name": name}
    if isinstance(value, torch.Tensor):
        entry.update({"kind": "tensor", "dtype": dtype_name(value.dtype), "shape": list(value.shape)})
    else:
        entry.update(scalar_ref(value))
    return entry
