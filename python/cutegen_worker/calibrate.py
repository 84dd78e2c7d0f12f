"""The device's practical ceilings for the roofline: memory bandwidth and dense matmul rates.

The best of several runs is taken: a ceiling is what the hardware can do, not what it usually does.
Two bandwidths: a copy's (bytes read + written) and a read-only sum's, since DRAM reads alone run faster
than reads and writes mixed: on an H200 a kernel that mostly reads (a loss over two inputs) moved
4.33 TB/s where a copy reached 4.18, and was printed at 103% of the "physical limit"
(benchmarks/results.md). The floor interpolates the two by a problem's share of
bytes written (src/run/roofline.cpp). A ceiling any honest kernel beats is no ceiling. On the CPU
(tests) sizes are small; the numbers only exercise the code path.
"""
import time

import torch

from .reference import disable_tf32
from .timing import device_name

_REPS = 10


def _best_ms(fn, device: torch.device) -> float:
    for _ in range(2):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        best = float("inf")
        for _ in range(_REPS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end))
        return best
    best = float("inf")
    for _ in range(_REPS):
        t0 = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - t0) * 1e3)
    return best


def copy_gbps(device: torch.device, nbytes: int) -> float:
    """Bytes read + written per second by the better of a byte copy and an fp32 elementwise op (a negation):
    PyTorch's own ReLU outran the byte copy's figure on an H200, and a ceiling an honest kernel beats is none."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    copy_ms = _best_ms(lambda: dst.copy_(src), device)
    x, y = src.view(torch.float32), dst.view(torch.float32)
    neg_ms = _best_ms(lambda: torch.neg(x, out=y), device)
    return 2 * nbytes / (min(copy_ms, neg_ms) * 1e-3) / 1e9


def read_gbps(device: torch.device, nbytes: int) -> float:
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1)
    ms = _best_ms(lambda: src.sum(), device)
    return nbytes / (ms * 1e-3) / 1e9  # bytes read (the one-value result is nothing)


# Bumped when what is measured changes: a cached calibration of an older version is measured again.
VERSION = 3


def matmul_tflops(device: torch.device, n: int, dtype: torch.dtype, tf32: bool) -> float:
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        ms = _best_ms(lambda: torch.mm(a, b), device)
    finally:
        disable_tf32()
    return 2 * n ** 3 / (ms * 1e-3) / 1e12


def calibrate(device: torch.device) -> dict:
    big = device.type == "cuda"
    nbytes = (2 << 30) if big else (32 << 20)
    n = 8192 if big else 256
    copy, read = copy_gbps(device, nbytes), read_gbps(device, nbytes)
    return {
        "version": VERSION,
        "gpu": device_name(device),
        "hbm_gbps": max(copy, read),
        "copy_gbps": copy,
        "read_gbps": read,
        "tflops": {
            "fp32": matmul_tflops(device, n, torch.float32, tf32=False),
            "tf32": matmul_tflops(device, n, torch.float32, tf32=True),
            "fp16": matmul_tflops(device, n, torch.float16, tf32=False),
            "bf16": matmul_tflops(device, n, torch.bfloat16, tf32=False),
        },
    }
