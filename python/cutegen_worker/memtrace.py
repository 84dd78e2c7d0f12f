"""CUTEGEN_MEMORY_TRACE=1: the judge's device memory step by step, one line per step on the worker's stderr
(its log, /tmp/cutegen-worker.log unless the caller names another).

For finding what a session holds at its peak when the count in memory.py says it fits and the GPU still
runs out (KernelBench's softmax on an 80 GB H100): each line gives what PyTorch has allocated now, the most
it had allocated since the line before, what its cache reserves, what the shared buffers hold (allocated
outside PyTorch's cache) and what the whole device has in use -- other processes, the runner included.
Off by default: reading the device's free memory is a driver call, and the lines are of no use to a user."""
import os
import sys

import torch

from . import shared_buffers

GIB = float(1 << 30)
ENV = "CUTEGEN_MEMORY_TRACE"


def enabled() -> bool:
    return os.environ.get(ENV, "") == "1"


def note(label: str) -> None:
    """One line for the step that ends here (`label`), and a fresh peak for the next; nothing unless enabled
    and CUDA is in use."""
    if not enabled() or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return
    free, total = torch.cuda.mem_get_info()
    print(f"memtrace {label}: allocated {torch.cuda.memory_allocated() / GIB:.2f} GiB, "
          f"peak {torch.cuda.max_memory_allocated() / GIB:.2f}, reserved {torch.cuda.memory_reserved() / GIB:.2f}, "
          f"shared {shared_buffers.live_bytes() / GIB:.2f}, device in use {(total - free) / GIB:.2f} of "
          f"{total / GIB:.2f}", file=sys.stderr, flush=True)
    torch.cuda.reset_peak_memory_stats()


def note_estimate(estimate: dict) -> None:
    """The load's memory estimate (memory.estimates), in GiB, for reading beside the steps."""
    if not enabled():
        return
    sizes = ", ".join(f"{k} {v / GIB:.2f}" for k, v in estimate.items() if isinstance(v, int))
    print(f"memtrace estimate: {sizes}", file=sys.stderr, flush=True)
