"""The buffers the runner sees: output allocation and poisoning, pristine clones, tensor refs.

On CUDA a tensor ref carries the CUDA IPC handle of the caching allocator block that holds the
tensor plus the byte offset of the tensor in that block. Several tensors can live in one block, so
the same handle can appear in several refs (with different offsets): the runner must open each
distinct handle once. On the CPU (tests) a ref carries `data_ptr` instead.
"""
import base64
import math

import torch

from .dtypes import dtype_name
from .errors import WorkerError

_IPC_HANDLE_BYTES = 64


def poison_(t: torch.Tensor) -> torch.Tensor:
    """NaN for floating outputs (what `unwritten` detection looks for); all-ones bytes otherwise."""
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.view(torch.uint8).fill_(0xFF)
    else:
        t.fill_(-1 if t.is_signed() else 0xFF)
    return t


def alloc_output(shape, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    # The runner poisons outputs before each run as well; poisoning here too makes an output the
    # candidate never wrote look unwritten even where no runner ran (CPU tests).
    return poison_(torch.empty(tuple(shape), dtype=dtype, device=device))


def host_clone(t: torch.Tensor) -> torch.Tensor:
    """A copy kept by the worker only. On a GPU it lives in host memory: for KernelBench-sized
    problems the device cannot hold inputs, two output sets AND copies of everything."""
    return t.detach().to("cpu", copy=True)


def span_bytes(t: torch.Tensor) -> int:
    """Bytes from the tensor's first element to its last (its numel * itemsize when contiguous)."""
    if t.numel() == 0:
        return 0
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return (last + 1) * t.element_size()


def _ipc_fields(t: torch.Tensor) -> dict:
    share = t.untyped_storage()._share_cuda_()
    handle, storage_offset_bytes = share[1], share[3]
    if len(handle) != _IPC_HANDLE_BYTES:
        raise WorkerError(
            f"the CUDA IPC handle of a tensor is {len(handle)} bytes, not the {_IPC_HANDLE_BYTES} of a "
            "cudaIpcMemHandle_t; unset PYTORCH_CUDA_ALLOC_CONF's expandable_segments for the worker"
        )
    return {
        "ipc_handle": base64.b64encode(handle).decode("ascii"),
        "offset": int(storage_offset_bytes) + t.storage_offset() * t.element_size(),
    }


def tensor_ref(t: torch.Tensor) -> dict:
    ref = {
        "kind": "tensor",
        "dtype": dtype_name(t.dtype),
        "shape": list(t.shape),
        "stride": list(t.stride()),
        "nbytes": span_bytes(t),
    }
    if t.device.type == "cuda":
        ref.update(_ipc_fields(t))
    else:
        ref.update({"ipc_handle": None, "offset": 0, "data_ptr": t.data_ptr()})
    return ref


def scalar_ref(value) -> dict:
    if isinstance(value, bool):
        return {"kind": "scalar", "dtype": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "scalar", "dtype": "int64", "value": value}
    return {"kind": "scalar", "dtype": "float64", "value": float(value)}


def value_ref(value) -> dict:
    return tensor_ref(value) if isinstance(value, torch.Tensor) else scalar_ref(value)


def describe(value, name=None) -> dict:
    """Metadata entry (no buffer address) for an input, parameter or output."""
    entry = {} if name is None else {"name": name}
    if isinstance(value, torch.Tensor):
        entry.update({"kind": "tensor", "dtype": dtype_name(value.dtype), "shape": list(value.shape)})
    else:
        ref = scalar_ref(value)
        entry.update({"kind": "scalar", "dtype": ref["dtype"], "value": ref["value"]})
    return entry


def nbytes_total(tensors) -> int:
    return sum(math.prod(t.shape) * t.element_size() for t in tensors if isinstance(t, torch.Tensor))
