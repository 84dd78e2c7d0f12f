"""Buffers the runner sees, each a dedicated allocation: the only memory a candidate can reach.

A CUDA IPC handle maps a whole allocation into the other process. torch's caching allocator carves
many tensors out of one cudaMalloc'd segment, so sharing a tensor from it (`_share_cuda_()`) would
also map whatever else lives in that segment -- possibly a reference output, a pristine input copy
or the reference model's weights -- and a candidate could simply read the answer at a negative or
large offset. So every shared buffer (trial inputs, both output sets, parameter copies, timing
inputs and outputs) is allocated here with cuMemAlloc (cuda_driver.py), alone in its allocation,
at offset 0, and its handle is exported. Worker-private tensors (references, regenerated inputs,
the models) stay in torch's allocator, which never hands out those allocations.

On the CPU (tests) the buffers are ordinary torch tensors and refs carry `data_ptr`.

Lifetime: a buffer is freed when the arena is released (each `prepare` releases the previous
one's) and the last tensor viewing it is gone; the arena reports buffers that something still
holds instead of freeing memory a live tensor points at.
"""
import base64
import gc
import sys
import weakref

import torch

from .dtypes import dtype_name
from .errors import WorkerError


# GPU memory is mapped in pages of up to 2 MiB, and the driver may place small allocations side by
# side in one page; an IPC mapping covers whole pages. Rounding every shared buffer up to 2 MiB
# keeps anything else out of the pages a candidate can map (at most 2 MiB wasted per buffer).
PAGE_BYTES = 2 << 20


# Bytes of this process's live shared buffers: device memory outside torch's cache that is the worker's own,
# which memory.others_hold_bytes must not count as another process's.
_live_bytes = 0


def live_bytes() -> int:
    return _live_bytes


def _round_to_page(nbytes: int) -> int:
    return max(1, -(-nbytes // PAGE_BYTES)) * PAGE_BYTES


class _DeviceAllocation:
    """Owns one cuMemAlloc'd block; frees it when the last tensor made from it is collected."""

    def __init__(self, driver, ordinal: int, nbytes: int):
        self.driver, self.ordinal = driver, ordinal
        self.nbytes = _round_to_page(nbytes)
        self.ptr = driver.alloc(ordinal, self.nbytes)
        global _live_bytes
        _live_bytes += self.nbytes
        self.handle = driver.ipc_handle(ordinal, self.ptr)
        # Read by torch.as_tensor: the block as a flat byte array; torch keeps this object alive
        # as long as any tensor views the memory.
        self.__cuda_array_interface__ = {"shape": (self.nbytes,), "typestr": "|u1",
                                         "data": (self.ptr, False), "version": 2}

    def __del__(self):
        if sys.is_finalizing():
            return  # the process is ending: the driver releases everything
        try:
            torch.cuda.synchronize(self.ordinal)  # no kernel may still use the block
            self.driver.free(self.ordinal, self.ptr)
            global _live_bytes
            _live_bytes -= self.nbytes
        except Exception as exc:  # __del__ cannot raise; a failed free leaks device memory, say so
            print(f"cutegen-worker: freeing a shared buffer failed: {exc}", file=sys.stderr)


def _dense_strides(t: torch.Tensor) -> bool:
    """True when the elements cover their span exactly once (contiguous up to a permutation)."""
    expected = 1
    for size, stride in sorted(zip(t.shape, t.stride()), key=lambda p: p[1]):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def span_bytes(shape, stride, element_size: int) -> int:
    if any(s == 0 for s in shape):
        return 0
    return (sum((size - 1) * st for size, st in zip(shape, stride)) + 1) * element_size


class SharedArena:
    """Allocates the buffers of one `prepare`. Only tensors made here can be described to the runner."""

    def __init__(self, device: torch.device, driver=None):
        self.device = device
        self._owners = {}  # data_ptr -> _DeviceAllocation (CUDA) or the base tensor (CPU)
        self._handles = {}  # data_ptr -> base64 IPC handle (CUDA only)
        self._released = []  # weak references to owners of released arenas' buffers
        self.bytes = 0
        if device.type == "cuda":
            from .cuda_driver import driver as default_driver
            self._driver = driver or default_driver()
            self._ordinal = device.index if device.index is not None else torch.cuda.current_device()

    def _raw(self, nbytes: int) -> torch.Tensor:
        if self.device.type == "cuda":
            owner = _DeviceAllocation(self._driver, self._ordinal, nbytes)
            raw = torch.as_tensor(owner, device=self.device)[:nbytes]
            self._owners[raw.data_ptr()] = owner
            self._handles[raw.data_ptr()] = base64.b64encode(owner.handle).decode("ascii")
        else:
            raw = torch.empty(max(1, nbytes), dtype=torch.uint8)[:nbytes]
            self._owners[raw.data_ptr()] = raw
        self.bytes += nbytes
        return raw

    def empty(self, shape, dtype: torch.dtype, stride=None) -> torch.Tensor:
        shape = tuple(shape)
        stride = tuple(stride) if stride is not None else torch.empty(shape, device="meta").stride()
        element = torch.empty((), dtype=dtype).element_size()
        raw = self._raw(span_bytes(shape, stride, element))
        # uint8 -> dtype works for every dtype (bfloat16 too, which the array interface cannot name).
        return raw.view(dtype).as_strided(shape, stride)

    def copy_of(self, t: torch.Tensor) -> torch.Tensor:
        """A shared copy of `t`, with the same strides when they are dense (views of expanded or
        overlapping tensors become contiguous: a write could not be checked element by element)."""
        stride = t.stride() if _dense_strides(t) else None
        out = self.empty(t.shape, t.dtype, stride)
        with torch.no_grad():
            out.copy_(t)
        return out

    def ref(self, t: torch.Tensor) -> dict:
        """The tensor ref of a buffer of this arena (docs/worker-protocol.md, "Tensor references")."""
        ptr = t.data_ptr()
        if ptr not in self._owners and t.numel() > 0:
            raise WorkerError("internal: a tensor that is not a shared buffer was about to be shared with the runner")
        ref = {"kind": "tensor", "dtype": dtype_name(t.dtype), "shape": list(t.shape), "stride": list(t.stride()),
               "nbytes": span_bytes(t.shape, t.stride(), t.element_size())}
        if self.device.type == "cuda":
            ref.update({"ipc_handle": self._handles.get(ptr), "offset": 0})
        else:
            ref.update({"ipc_handle": None, "offset": 0, "data_ptr": ptr})
        return ref

    def drop(self, t: torch.Tensor) -> None:
        """Drops one buffer of the arena (it is freed when the caller's last view goes): no runner may map it."""
        owner = self._owners.pop(t.data_ptr(), None)
        if owner is None:
            raise WorkerError("internal: dropping a tensor that is not one of the arena's buffers")
        self._handles.pop(t.data_ptr(), None)
        self.bytes -= span_bytes(t.shape, t.stride(), t.element_size())  # what _raw counted for it

    def release(self) -> int:
        """Drops the arena's buffers; returns the bytes still held by tensors alive elsewhere."""
        held = [weakref.ref(o) for o in self._owners.values() if self.device.type == "cuda"]
        self._owners.clear()
        self._handles.clear()
        self.bytes = 0
        if not held:
            return 0
        gc.collect()  # tensors in reference cycles (tracebacks, closures) let go of their buffers
        alive = [o() for o in held if o() is not None]
        leaked = sum(o.nbytes for o in alive)
        if leaked:
            print(f"cutegen-worker: {len(alive)} shared buffers ({leaked} bytes) are still referenced after release; "
                  "they are freed when the last reference goes", file=sys.stderr)
        return leaked
