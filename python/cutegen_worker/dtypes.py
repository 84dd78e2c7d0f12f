"""dtype names shared with the C++ side (the kernel contract's cutegen_dtype values)."""
import torch

from .errors import ProblemError

_BY_NAME = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "int16": torch.int16,
}
_BY_DTYPE = {v: k for k, v in _BY_NAME.items()}

# Lowest precision first: the problem's dtype is its least precise floating dtype, because that is
# the precision the computation is really done in.
_FLOAT_PRECISION_ORDER = [torch.bfloat16, torch.float16, torch.float32, torch.float64]


def dtype_name(dtype: torch.dtype) -> str:
    try:
        return _BY_DTYPE[dtype]
    except KeyError:
        supported = " ".join(_BY_NAME)
        raise ProblemError(f"dtype {dtype} is not supported by the kernel contract (supported: {supported})")


def problem_dtype(dtypes) -> torch.dtype:
    """The least precise floating dtype among `dtypes`, else the first dtype (an integer problem)."""
    dtypes = list(dtypes)
    for candidate in _FLOAT_PRECISION_ORDER:
        if candidate in dtypes:
            return candidate
    return dtypes[0] if dtypes else torch.float32
