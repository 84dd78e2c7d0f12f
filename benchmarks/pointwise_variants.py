#!/usr/bin/env python3
"""Launch shapes of one pointwise kernel, in-process, on the problem's inputs and on signed ones.

The judge reports a kernel's time on the slower of two input distributions: the problem's own
(`get_inputs()`) and the same with random signs. For ops with a branch (ELU, SELU: expm1 on the negative
side only) the signed inputs are the slow ones; for ops with transcendental math everywhere (Softplus) both
are. This times contract kernels built with different knob values (the file name says which) and eager
PyTorch on both distributions with CUDA events, the L2 flushed before each run and the GPU kept busy
while the launch is queued, so only the kernels are measured.

Usage: benchmarks/pointwise_variants.py PROBLEM.py KERNEL.so [KERNEL.so ...] [--reps 20]   (needs a CUDA GPU)
"""
import argparse
import ctypes
import importlib.util
import os
import statistics
import sys

import torch

_MAX_RANK = 8


class Descriptor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * _MAX_RANK), ("stride", ctypes.c_int64 * _MAX_RANK),
                ("is_host_scalar", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("scalar_f", ctypes.c_double), ("scalar_i", ctypes.c_int64)]


def describe(t: torch.Tensor) -> Descriptor:
    d = Descriptor()
    d.data, d.dtype, d.rank = t.data_ptr(), 0, t.dim()
    for i in range(t.dim()):
        d.shape[i], d.stride[i] = t.shape[i], t.stride(i)
    return d


def contract_call(path: str, x: torch.Tensor, y: torch.Tensor):
    lib = ctypes.CDLL(path)
    lib.cutegen_forward.restype = ctypes.c_int
    tensors = [ctypes.POINTER(Descriptor), ctypes.c_int32, ctypes.POINTER(Descriptor), ctypes.c_int32]
    lib.cutegen_forward.argtypes = tensors + [ctypes.c_void_p]
    inputs, outputs = (Descriptor * 1)(describe(x)), (Descriptor * 1)(describe(y))

    def run():
        rc = lib.cutegen_forward(inputs, 1, outputs, 1, torch.cuda.current_stream().cuda_stream)
        if rc != 0:
            raise RuntimeError(f"{os.path.basename(path)}: cutegen_forward returned {rc}")
    return run


def events_ms(fn, flush: torch.Tensor, reps: int) -> float:
    out = []
    for _ in range(reps):
        flush.zero_()
        torch.cuda._sleep(200_000)  # the launch below is queued before `start` runs
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return statistics.median(out[2:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problem")
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("pointwise_variants: needs a CUDA GPU", file=sys.stderr)
        return 1
    spec = importlib.util.spec_from_file_location("problem", args.problem)
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    model = problem.Model(*problem.get_init_inputs()).cuda()
    torch.manual_seed(0)
    x = problem.get_inputs()[0].cuda()
    signs = torch.randint(0, 2, x.shape, device="cuda", dtype=torch.int8).mul_(2).sub_(1).to(x.dtype)
    sets = {"problem": x, "signed": x * signs}
    del signs
    y = torch.empty_like(x)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print(f"## {os.path.basename(args.problem)}: {tuple(x.shape)} {x.dtype}, {torch.cuda.get_device_name()}\n")
    print("| kernel | problem ms | signed ms | slower |\n|---|---|---|---|")
    rows = [("eager", {k: (lambda v=v: model(v)) for k, v in sets.items()})]
    rows += [(os.path.basename(p), {k: contract_call(os.path.abspath(p), v, y) for k, v in sets.items()})
             for p in args.kernels]
    with torch.no_grad():
        for name, fns in rows:
            ms = {k: events_ms(fn, flush, args.reps) for k, fn in fns.items()}
            print(f"| {name} | {ms['problem']:.4f} | {ms['signed']:.4f} | {max(ms.values()):.4f} |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
