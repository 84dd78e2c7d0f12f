#!/usr/bin/env python3
"""Where does the judge's two-process excess come from, and is a kernel slower on IPC-mapped memory?

The judge times a candidate's call from the worker's side of a pipe; on an H200 an honest 12.9 GB ReLU
reads 0.13-0.2 ms above the runner's own CUDA events, and the excess grows with the memory a call moves
(docs/judge.md, "Known limits"). This reproduces that arrangement with nothing of cutegen but a kernel
library (the contract's `cutegen_forward`), to separate the candidate causes:

  A. one process, native allocations: each kernel variant and torch.relu, events only (the kernel itself);
  B. a second process on the first one's memory through CUDA IPC, against the same sizes allocated there
     (is IPC-mapped memory slower to stream?);
  C. the round trip as the judge makes it: the first process marks its stream, sends a command, the second
     runs the kernel between its events, synchronises and replies, the first marks again. span − events,
     per size moved, on IPC or native memory, with and without 10 GB more mapped and untouched, with and
     without the first process writing fresh inputs right before (the judge's staging).

Usage: benchmarks/two_process_excess.py KERNEL.so [KERNEL.so ...] [--reps 20]   (needs a CUDA GPU)
Prints markdown tables; numbers are medians in ms.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.multiprocessing as mp

from contract_abi import contract_call, events_ms

GB = 1 << 30


class Kernel:
    """A contract kernel (or torch.relu for 'eager') bound to one input and one output tensor."""

    def __init__(self, path: str, x: torch.Tensor, y: torch.Tensor):
        self.name = os.path.basename(path)
        self.x, self.y = x, y
        if path == "eager":
            self.fn = lambda: torch.relu(x)  # as KernelBench calls it (its output from the caching allocator)
            return
        self.fn = contract_call(path, x, y)


# ---- the second process ------------------------------------------------------------------------------
def runner(conn, kernel_paths, shared, reps):
    torch.cuda.set_device(0)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream()
    results = {}
    # B: kernels on IPC-mapped memory against native allocations of the same size.
    x_ipc, y_ipc = shared["x"], shared["y"]
    x_nat = torch.randn(x_ipc.shape, device="cuda")
    y_nat = torch.empty_like(x_nat)
    for path in kernel_paths:
        for where, (x, y) in (("ipc", (x_ipc, y_ipc)), ("native", (x_nat, y_nat))):
            results[("B", os.path.basename(path), where)] = events_ms(Kernel(path, x, y).fn, flush, reps)
    conn.send(results)
    # C: serve commands: ("call", kernel index, where, rows) | ("ping",) | ("map_extra", tensor) | ("stop",)
    kernels = {}
    extra = None
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while True:
        while not conn.poll(0):
            pass
        cmd = conn.recv()
        if cmd[0] == "stop":
            break
        if cmd[0] == "map_extra":
            extra = cmd[1]  # opened (IPC-mapped) as the command was unpickled; kept referenced
            conn.send(("ok", extra.numel()))
            continue
        if cmd[0] == "unmap_extra":
            extra = None
            conn.send(("ok", 0))
            continue
        if cmd[0] == "ping":
            start.record(stream)
            stop.record(stream)
        else:
            _, index, where, rows = cmd
            key = (index, where, rows)
            if key not in kernels:
                x, y = (x_ipc, y_ipc) if where == "ipc" else (x_nat, y_nat)
                kernels[key] = Kernel(kernel_paths[index], x[:rows], y[:rows])
            start.record(stream)
            kernels[key].fn()
            stop.record(stream)
        stream.synchronize()
        torch.cuda.synchronize()
        conn.send(("done", start.elapsed_time(stop)))
    conn.send(("bye",))


def round_trip(conn, mark_stream, cmd, stage=None, flush=None):
    """One judged-style call: stage, flush, mark, command, reply, mark. Returns (span ms, runner events ms)."""
    if stage is not None:
        stage.normal_()
    if flush is not None:
        flush.zero_()
    torch.cuda.synchronize()
    m0, m1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    m0.record(mark_stream)
    torch.cuda.synchronize()  # the mark is on the GPU before the command goes out
    t0 = time.perf_counter_ns()
    conn.send(cmd)
    while not conn.poll(0):
        pass
    reply = conn.recv()
    wall = (time.perf_counter_ns() - t0) / 1e6
    m1.record(mark_stream)
    m1.synchronize()
    return m0.elapsed_time(m1), reply[1], wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="+", help="contract kernel libraries (one fp32 input, one output)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rows", type=int, default=4096, help="rows of 393216 fp32 (KernelBench 19: 4096)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("two_process_excess: needs a CUDA GPU", file=sys.stderr)
        return 1
    paths = [os.path.abspath(p) for p in args.kernels] + ["eager"]
    names = [os.path.basename(p) for p in paths]
    shape = (args.rows, 393216)
    x = torch.randn(shape, device="cuda")
    y = torch.empty_like(x)
    extra = torch.empty(10 * GB, dtype=torch.uint8, device="cuda")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print(f"# two_process_excess on {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"tensor {tuple(shape)} fp32 ({x.numel() * 4 / 1e9:.2f} GB each)\n")

    # A: one process, native memory.
    print("## A. The kernel alone (one process, native allocations, events)\n")
    print("| kernel | ms | GB/s (read + write) |\n|---|---|---|")
    for path in paths:
        ms = events_ms(Kernel(path, x, y).fn, flush, args.reps)
        print(f"| {os.path.basename(path)} | {ms:.4f} | {2 * x.numel() * 4 / ms / 1e6:.0f} |")
    sys.stdout.flush()

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=runner, args=(child, paths, {"x": x, "y": y}, args.reps))
    proc.start()
    b = parent.recv()
    print("\n## B. The same kernels in a second process: IPC-mapped memory against its own\n")
    print("| kernel | IPC ms | native ms | IPC / native |\n|---|---|---|---|")
    for name in names:
        ipc, nat = b[("B", name, "ipc")], b[("B", name, "native")]
        print(f"| {name} | {ipc:.4f} | {nat:.4f} | {ipc / nat:.3f} |")
    sys.stdout.flush()

    print("\n## C. The judge's round trip: span (first process's marks) − the runner's events\n")
    print("| case | rows | GB moved | events ms | span − events ms | wall − events ms |\n|---|---|---|---|---|---|")
    stream = torch.cuda.current_stream()
    best = names.index("eager") if len(names) == 1 else 0

    def measure(label, cmd, rows, stage=None):
        spans, walls = [], []
        for _ in range(args.reps):
            span, ev, wall = round_trip(parent, stream, cmd, stage=stage, flush=flush)
            spans.append(span - ev)
            walls.append(wall - ev)
            evs.append(ev)
        moved = 2 * rows * shape[1] * 4 / 1e9
        print(f"| {label} | {rows} | {moved:.2f} | {statistics.median(evs[-args.reps:]):.4f} | "
              f"{statistics.median(spans[2:]):.4f} (min {min(spans[2:]):.4f}) | {statistics.median(walls[2:]):.4f} |")
        sys.stdout.flush()

    evs = []
    measure("ping", ("ping",), 0)
    for rows in (max(1, shape[0] // 96), max(1, shape[0] // 3), shape[0]):  # ~67 MB, ~2 GB (scaled), all
        for where in ("ipc", "native"):
            measure(f"{names[best]} on {where}", ("call", best, where, rows), rows)
    measure(f"{names[best]} on ipc, staged before", ("call", best, "ipc", shape[0]), shape[0], stage=x)
    parent.send(("map_extra", extra))
    parent.recv()
    measure("ping, 10 GB more mapped", ("ping",), 0)
    small = max(1, shape[0] // 96)
    measure(f"{names[best]} on ipc, 10 GB more mapped", ("call", best, "ipc", small), small)
    measure(f"{names[best]} on ipc, 10 GB more mapped", ("call", best, "ipc", shape[0]), shape[0])
    parent.send(("stop",))
    parent.recv()
    proc.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
