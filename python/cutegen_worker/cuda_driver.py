"""The few CUDA driver calls the worker makes itself, through ctypes on libcuda.so.1.

Why not torch: buffers shared with the runner must be allocations of their own (shared_buffers.py
says why), and torch has no public call that makes one and exports its IPC handle. The driver
library is used rather than a CUDA runtime because it is always there when a GPU works (it ships
with the driver) and its handles are the runtime's (`cudaIpcOpenMemHandle` in the runner opens a
`cuIpcGetMemHandle` handle). Every call runs with the device's primary context current, which is
the context torch uses, so torch kernels and the runner see the same memory.
"""
import ctypes

_IPC_HANDLE_BYTES = 64


class CudaDriverError(RuntimeError):
    pass


class _IpcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * _IPC_HANDLE_BYTES)]


class CudaDriver:
    def __init__(self, library: str = "libcuda.so.1"):
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as exc:
            raise CudaDriverError(f"cannot load the CUDA driver library {library}: {exc}") from None
        self._declare()
        self._check(self._lib.cuInit(0), "cuInit")
        self._contexts = {}  # device ordinal -> retained primary context

    def _declare(self):
        lib, u64, p = self._lib, ctypes.c_uint64, ctypes.POINTER
        signatures = {
            "cuInit": [ctypes.c_uint],
            "cuDeviceGet": [p(ctypes.c_int), ctypes.c_int],
            "cuDevicePrimaryCtxRetain": [p(ctypes.c_void_p), ctypes.c_int],
            "cuCtxPushCurrent_v2": [ctypes.c_void_p],
            "cuCtxPopCurrent_v2": [p(ctypes.c_void_p)],
            "cuMemAlloc_v2": [p(u64), ctypes.c_size_t],
            "cuMemFree_v2": [u64],
            "cuIpcGetMemHandle": [p(_IpcMemHandle), u64],
            "cuMemGetAddressRange_v2": [p(u64), p(ctypes.c_size_t), u64],
            "cuGetErrorName": [ctypes.c_int, p(ctypes.c_char_p)],
        }
        for name, args in signatures.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, ctypes.c_int

    def _check(self, code: int, what: str) -> None:
        if code != 0:
            name = ctypes.c_char_p()
            self._lib.cuGetErrorName(code, ctypes.byref(name))
            text = name.value.decode() if name.value else f"error {code}"
            raise CudaDriverError(f"{what} failed: {text}")

    def _context(self, ordinal: int):
        if ordinal not in self._contexts:
            device, context = ctypes.c_int(), ctypes.c_void_p()
            self._check(self._lib.cuDeviceGet(ctypes.byref(device), ordinal), "cuDeviceGet")
            self._check(self._lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
            self._contexts[ordinal] = context
        return self._contexts[ordinal]

    def _in_context(self, ordinal: int, fn):
        self._check(self._lib.cuCtxPushCurrent_v2(self._context(ordinal)), "cuCtxPushCurrent")
        try:
            return fn()
        finally:
            popped = ctypes.c_void_p()
            self._lib.cuCtxPopCurrent_v2(ctypes.byref(popped))

    def alloc(self, ordinal: int, nbytes: int) -> int:
        """A new allocation of its own (cuMemAlloc), at least 256-byte aligned."""
        ptr = ctypes.c_uint64()
        self._in_context(ordinal, lambda: self._check(
            self._lib.cuMemAlloc_v2(ctypes.byref(ptr), max(1, nbytes)), f"cuMemAlloc of {nbytes} bytes"))
        return ptr.value

    def free(self, ordinal: int, ptr: int) -> None:
        self._in_context(ordinal, lambda: self._check(self._lib.cuMemFree_v2(ptr), "cuMemFree"))

    def ipc_handle(self, ordinal: int, ptr: int) -> bytes:
        handle = _IpcMemHandle()
        self._in_context(ordinal, lambda: self._check(
            self._lib.cuIpcGetMemHandle(ctypes.byref(handle), ptr), "cuIpcGetMemHandle"))
        return bytes(handle.reserved)

    def address_range(self, ordinal: int, ptr: int) -> tuple:
        """(base, size) of the allocation holding `ptr`: what an IPC handle of it would map."""
        base, size = ctypes.c_uint64(), ctypes.c_size_t()
        self._in_context(ordinal, lambda: self._check(
            self._lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr), "cuMemGetAddressRange"))
        return base.value, size.value


_driver = None


def driver() -> CudaDriver:
    global _driver
    if _driver is None:
        _driver = CudaDriver()
    return _driver
