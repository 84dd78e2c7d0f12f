"""How much memory a `prepare` needs, so the judge can size its requests and we fail before OOM.

A KernelBench-sized problem can have 6 GiB tensors: five problem trials, two robustness trials
(each inputs + two output sets) and four timing sets (inputs + one output set) of such a problem
do not fit in an H200 at once. `load` reports the per-set sizes; `prepare` refuses a request that
cannot fit, saying how many trials would.
"""
import os

import torch

from .errors import ProblemError, RequestError
from .shared_buffers import PAGE_BYTES

GIB = float(1 << 30)


def tensor_bytes(values, page: int = 1) -> int:
    """Bytes of the tensors among `values`, each rounded up to `page` (shared buffers on a GPU
    are whole 2 MiB pages, shared_buffers.PAGE_BYTES)."""
    return sum(-(-(v.numel() * v.element_size()) // page) * page for v in values if isinstance(v, torch.Tensor))


def device_memory(device: torch.device) -> tuple:
    """(free, total) bytes: free counts memory torch's cache holds but does not use."""
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return free + cached, total
    pages = os.sysconf("SC_PHYS_PAGES")
    available = os.sysconf("SC_AVPHYS_PAGES")
    size = os.sysconf("SC_PAGE_SIZE")
    return available * size, pages * size


class PeakMeter:
    """Peak device bytes allocated above the level at entry (CUDA; 0 on the CPU)."""

    def __init__(self, device: torch.device):
        self.device = device
        self.peak = 0

    def __enter__(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            self.peak = max(0, torch.cuda.max_memory_allocated(self.device) - self.base)
        return False


def estimates(forward_inputs, params, outputs, check_workspace: int, device: torch.device) -> dict:
    """The `memory` object of the load answer."""
    page = PAGE_BYTES if device.type == "cuda" else 1
    inputs_bytes, outputs_bytes = tensor_bytes(forward_inputs, page), tensor_bytes(outputs, page)
    free, total = device_memory(device)
    return {
        "bytes_per_trial": inputs_bytes + 2 * outputs_bytes,
        "bytes_per_timing_set": inputs_bytes + outputs_bytes,
        "bytes_params": tensor_bytes(params, page),
        "check_workspace_bytes": int(check_workspace),
        "device_free_bytes": int(free),
        "device_total_bytes": int(total),
    }


def check_fits(path: str, estimate: dict, n_trials: int, n_timing: int, device: torch.device) -> None:
    """Raises before allocating when the shared buffers plus one check's workspace cannot fit."""
    free, _ = device_memory(device)
    per_trial, per_timing = estimate["bytes_per_trial"], estimate["bytes_per_timing_set"]
    fixed = estimate["bytes_params"] + estimate["check_workspace_bytes"]
    need = fixed + n_trials * per_trial + n_timing * per_timing
    if need <= free:
        return
    if fixed + per_trial > free:
        raise ProblemError(
            f"{path}: one correctness trial needs {(fixed + per_trial) / GIB:.1f} GiB of {device} memory "
            f"(inputs, two output sets and the reference's workspace) but {free / GIB:.1f} GiB is free; "
            "make the problem's tensors smaller")
    fits = max(0, (free - fixed - n_timing * per_timing) // per_trial) if per_trial else n_trials
    raise RequestError(
        f"prepare needs {need / GIB:.1f} GiB of {device} memory for {n_trials} trials and {n_timing} timing sets "
        f"but {free / GIB:.1f} GiB is free; with {n_timing} timing sets at most {fits} trials fit per prepare "
        "(see `memory` in the load answer): prepare the trials in smaller batches")
