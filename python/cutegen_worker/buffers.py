"""Descriptions of values (metadata entries, scalar refs) and output poisoning.

Tensor refs -- what lets the runner reach a buffer -- are made only by shared_buffers.SharedArena,
for its own dedicated allocations; nothing here can describe a tensor's address.
"""
import torch

from .dtypes import dtype_name


# The integer view of each element width: the poison is written and recognised by its bits.
_INT_OF_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def output_pattern(r: int) -> int:
    """The 32-bit poison of an output set, from 32 random bits: workspace_pattern(r) (NaN read as any
    float width) whose six low random mantissa bits are neither all zero nor all ones, so that no NaN a
    kernel can compute has its bits -- not CUDA's canonical 0x7fffffff, nor 0x7fc00000, nor fp16's 0x7fff
    or 0x7e00, nor bf16's 0x7fc0, nor their negatives. A correct output that *is* NaN (a log of a
    negative input) is then never taken for the poison; only the worker's own fill has these bits."""
    six = (r >> 4) & 0x3F
    if six in (0, 0x3F):
        r ^= 0x10  # flips one of the six bits: neither all zero nor all ones any more
    return workspace_pattern(r)


def _word(pattern: int, width: int) -> int:
    """The poison of one element `width` bytes wide, as the signed integer its view holds."""
    word = {1: pattern & 0xFF, 2: pattern & 0xFFFF, 4: pattern, 8: pattern << 32 | pattern}[width]
    bits = 8 * width
    return word - (1 << bits) if width > 1 and word >= 1 << (bits - 1) else word


def poison_(t: torch.Tensor, pattern: int) -> torch.Tensor:
    """Fills `t` with the output poison `pattern` (output_pattern), bit for bit through an integer view
    of the same width: NaN for floating outputs, a random value for integers, and for bool outputs
    the pattern's low byte, which is never 0 or 1 (output_pattern keeps its top two bits set): a byte
    no bool a kernel writes can hold, so an element left unwritten is told apart from False and True
    (read as bool it would be True -- before, every poisoned byte was 0xFF and an unwritten element
    passed wherever the answer was True). Integers have no such value: every bit pattern is a valid
    integer, so an unwritten integer is caught by comparison -- two runs poisoned with patterns
    that differ in every width (Slot.poison_outputs), or the reference."""
    if t.numel() == 0:
        return t
    width = t.element_size()
    if width not in _INT_OF_WIDTH:
        raise ValueError(f"cannot poison a {t.dtype} output: no integer view of {width} bytes")
    t.view(_INT_OF_WIDTH[width]).fill_(_word(pattern, width))
    return t


def is_poison(values: torch.Tensor, pattern: int) -> torch.Tensor:
    """Where `values` (any dtype; bool as its bytes) still hold the poison `pattern` bit for bit."""
    width = values.element_size()
    return values.view(_INT_OF_WIDTH[width]) == _word(pattern, width)


def bool_poison_byte(pattern: int) -> int:
    """The byte a bool output is poisoned with: never 0 or 1 (see poison_)."""
    byte = pattern & 0xFF
    assert byte > 1, hex(pattern)
    return byte


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
