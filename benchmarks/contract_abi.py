"""The kernel contract's ABI (include/cutegen/kernel.h) from Python, for the benchmark scripts that call a
built kernel library directly (two_process_excess.py, pointwise_variants.py), and their event timing."""
import ctypes
import os
import statistics

import torch

MAX_RANK = 8
# cutegen_dtype values (part of the ABI).
DTYPE_CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.float64: 3, torch.int32: 4,
               torch.int64: 5, torch.bool: 6, torch.int8: 7, torch.uint8: 8, torch.int16: 9}


class Descriptor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK), ("stride", ctypes.c_int64 * MAX_RANK),
                ("is_host_scalar", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("scalar_f", ctypes.c_double), ("scalar_i", ctypes.c_int64)]


def describe(t: torch.Tensor) -> Descriptor:
    d = Descriptor()
    d.data, d.dtype, d.rank = t.data_ptr(), DTYPE_CODES[t.dtype], t.dim()
    for i in range(t.dim()):
        d.shape[i], d.stride[i] = t.shape[i], t.stride(i)
    return d


def contract_call(path: str, x: torch.Tensor, y: torch.Tensor):
    """A no-argument function launching the library's `cutegen_forward(x) -> y` on the current stream, or
    `cutegen_forward_ws` (contract version 2) with a workspace of the size the library asks for, allocated
    here once. The harness refills the workspace with garbage before every call; here the function's
    `poison()` does (NaN in every float width), for a caller to run before a correctness check, outside
    the timed calls."""
    lib = ctypes.CDLL(path)
    tensors = [ctypes.POINTER(Descriptor), ctypes.c_int32, ctypes.POINTER(Descriptor), ctypes.c_int32]
    inputs, outputs = (Descriptor * 1)(describe(x)), (Descriptor * 1)(describe(y))
    if hasattr(lib, "cutegen_forward_ws"):
        lib.cutegen_workspace_bytes.restype = ctypes.c_size_t
        lib.cutegen_workspace_bytes.argtypes = tensors
        shapes_in, shapes_out = (Descriptor * 1)(describe(x)), (Descriptor * 1)(describe(y))
        shapes_in[0].data = shapes_out[0].data = None  # the contract asks with NULL data pointers
        size = lib.cutegen_workspace_bytes(shapes_in, 1, shapes_out, 1)
        if size == 0:
            raise RuntimeError(f"{os.path.basename(path)}: cutegen_workspace_bytes returned 0")
        workspace = torch.empty(size, dtype=torch.uint8, device=x.device)
        lib.cutegen_forward_ws.restype = ctypes.c_int
        lib.cutegen_forward_ws.argtypes = tensors + [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]

        def run():
            rc = lib.cutegen_forward_ws(inputs, 1, outputs, 1, workspace.data_ptr(), size,
                                        torch.cuda.current_stream().cuda_stream)
            if rc != 0:
                raise RuntimeError(f"{os.path.basename(path)}: cutegen_forward_ws returned {rc}")
        run.poison = lambda: workspace.fill_(0xFF)
        return run
    lib.cutegen_forward.restype = ctypes.c_int
    lib.cutegen_forward.argtypes = tensors + [ctypes.c_void_p]

    def run():
        rc = lib.cutegen_forward(inputs, 1, outputs, 1, torch.cuda.current_stream().cuda_stream)
        if rc != 0:
            raise RuntimeError(f"{os.path.basename(path)}: cutegen_forward returned {rc}")
    return run


def events_ms(fn, flush: torch.Tensor, reps: int) -> float:
    """The median of `fn` alone on CUDA events (the first two runs dropped): the L2 is flushed before every
    run and the GPU kept busy (torch.cuda._sleep) while the host enqueues, so no launch overhead lands
    between the events."""
    out = []
    for _ in range(reps):
        flush.zero_()
        torch.cuda._sleep(200_000)  # ~0.1 ms of GPU time: the launch below is queued before `start` runs
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return statistics.median(out[2:])
