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


def workspace_pattern(r: int) -> int:
    """A 32-bit fill for the workspace from 32 random bits: whatever float width a kernel reads it as --
    fp16 or bf16 (either half), fp32 (the word), fp64 (two words) -- it is NaN, so a read of data
    the kernel did not write in this call spreads NaN into its outputs; as integers it is garbage.
    Each half is sign | all-ones exponent for both fp16 and bf16 | a non-zero random mantissa, and the
    high half's exponent also covers fp64's 11 bits."""
    hi = ((r >> 31) & 1) << 15 | 0x7FF0 | (r & 0xF)
    lo = ((r >> 30) & 1) << 15 | 0x7F80 | 0x40 | ((r >> 4) & 0x3F)
    return hi << 16 | lo


def poison_workspace_(t: torch.Tensor, r: int) -> int:
    """Fills a workspace (a uint8 buffer of whole 4-byte words) with workspace_pattern(r); returns the
    pattern. A fresh `r` per call: nothing a call leaves there, or learns of the last fill, helps the next."""
    pattern = workspace_pattern(r)
    signed = pattern - (1 << 32) if pattern >= 1 << 31 else pattern
    t.view(torch.int32).fill_(signed)
    return pattern


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
