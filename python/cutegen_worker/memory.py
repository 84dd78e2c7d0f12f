"""How much memory judging a kernel needs, so the worker fails before it runs out.

A runner session holds, from start to end, one slot of shared buffers (inputs, parameters, two output
sets), the L2 flush buffer and private copies of a timed call's outputs (audit.FULL_AUDITS of them for
the full audits, one more that the other calls are copied into). Beside those, at any one time, it
allocates at most one of: a check -- the staged values of the call being checked and the check's
workspace (the reference's cast inputs and outputs, or the reference beside PyTorch's own result) --
or the staging of the next call (get_inputs(), the signed transform, a parameter draw). `load` reports
the sizes; `evaluate_candidate` and `prepare_profile` refuse, before allocating, what cannot fit
(`session_bytes` is the sum).

A kernel with a workspace (contract v2) asks for its size only once loaded, so that size is bounded
instead: by a cap from the problem's size, and by what is free once the rest of the session is
counted (`workspace_cap`). A request over it is refused before anything is allocated for it.
"""
import os
import re

import torch

from . import audit, gpu_probe, gpu_share, runner_link
from .errors import BusyError, ProblemError, RequestError
from . import shared_buffers
from .shared_buffers import PAGE_BYTES

GIB = float(1 << 30)
MIB = 1 << 20
# The workspace cap: 8x the problem's input and output bytes (a split reduction needs a small
# fraction of its input; split-K a few copies of its output), at least 16 MiB so tiny problems can
# still keep per-block partials, at most 4 GiB.
WORKSPACE_FACTOR = 8
WORKSPACE_FLOOR = 16 * MIB
WORKSPACE_CEILING = 4 << 30


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


def estimates(forward_inputs, params, outputs, check_workspace: int, device: torch.device, staging: int = 0) -> dict:
    """The `memory` object of the load answer. `check_workspace`, `staging`: the peaks of a check and of a staging
    measured at load (session.py; 0 on the CPU)."""
    page = PAGE_BYTES if device.type == "cuda" else 1
    inputs_bytes, outputs_bytes = tensor_bytes(forward_inputs, page), tensor_bytes(outputs, page)
    free, total = device_memory(device)
    private = tensor_bytes(forward_inputs) + tensor_bytes(params)  # the staged pristine copy of a call
    io_bytes = private + tensor_bytes(outputs)
    return {
        "slot_bytes": inputs_bytes + tensor_bytes(params, page) + 2 * outputs_bytes,
        "staged_bytes": private,
        "audit_copies_bytes": (audit.FULL_AUDITS + 1) * tensor_bytes(outputs),
        "check_workspace_bytes": int(check_workspace),
        "staging_bytes": int(staging),
        "workspace_cap_bytes": min(WORKSPACE_CEILING, max(WORKSPACE_FLOOR, WORKSPACE_FACTOR * io_bytes)),
        "device_free_bytes": int(free),
        "device_total_bytes": int(total),
    }


# What a device's own contexts and fragmentation keep from a session even on an otherwise empty GPU.
CONTEXT_RESERVE_BYTES = 1 << 30
# The runner a session starts: another process, with its own CUDA context and buffers (the calibration's
# ping sweep, its stream's events), none of it in the estimate, and all of it allocated after the check.
RUNNER_RESERVE_BYTES = 1 << 30
# Host memory left to everything else when the private copies of timed outputs go there.
HOST_MARGIN_BYTES = 4 << 30
# The worker's buffer that flushes L2 before every timed call (candidate_session._Clock), held for a whole
# candidate session on a GPU.
FLUSH_BYTES = 256 << 20
COPY_PLACES = ("device", "host", "none")


def output_bytes(estimate: dict) -> int:
    """One set of the outputs, as one private copy of them holds it."""
    return estimate.get("audit_copies_bytes", 0) // (audit.FULL_AUDITS + 1)


def transient_bytes(estimate: dict) -> int:
    """The most a session allocates at any one time beside what it holds from start to end: a check (the staged
    values of the call checked, and the check's workspace -- the reference's cast inputs and outputs, or the
    reference beside PyTorch's own result and the comparison) or a staging (`staging_bytes`: get_inputs(), the
    signed transform and a parameter draw, the set made included; measured on a GPU, else the set itself).
    Nothing else is live then: a timed call's own PyTorch result is reduced to its values at the secret
    positions before the float64 reference runs, and a call's staged values are released before the next
    call's are made (candidate_session.py). Before, a timed call of KernelBench's softmax (6 GiB tensors) held
    PyTorch's 6 GiB output beside its check, uncounted, and ran an 80 GB H100 out of memory. (It still did after
    that fix, 2026-12-06, with ~12 GiB to spare by this count: the allocator's fragmentation, which expandable
    segments remove, allocator.py.)"""
    return max(estimate["staged_bytes"] + estimate["check_workspace_bytes"], estimate.get("staging_bytes", 0))


def session_bytes(estimate: dict, device: torch.device, copies: str = "device", runners: int = 1) -> int:
    """The peak device memory of a runner session: the slot, the larger of a check and a staging
    (transient_bytes), on a GPU the flush buffer and RUNNER_RESERVE_BYTES for the runner, and the private copies
    of timed outputs by where they are (`copies`): "device", all three; "host", one output set still -- a full
    audit brings its copy back to the device beside its check (candidate_session._full_audits); "none" (a
    session that times nothing, a profiling run, a screening group), none. `runners`: how many the session
    keeps running at once (a screening group: one per candidate)."""
    if copies not in COPY_PLACES:
        raise ValueError(f"copies={copies!r}: expected one of {', '.join(COPY_PLACES)}")
    need = estimate["slot_bytes"] + transient_bytes(estimate)
    if device.type == "cuda":
        need += FLUSH_BYTES + RUNNER_RESERVE_BYTES * runners
    if copies == "device":
        need += estimate.get("audit_copies_bytes", 0)
    elif copies == "host":
        need += output_bytes(estimate)
    return need


def runners_that_fit(estimate: dict, device: torch.device, most: int) -> int:
    """How many runners a screening group (no private copies) can keep at once within the device's free memory:
    the most, down to 1 (check_fits then says whether even one fits)."""
    if device.type != "cuda":
        return most
    free, _ = device_memory(device)
    fitting = most
    while fitting > 1 and session_bytes(estimate, device, "none", fitting) > free:
        fitting -= 1
    return fitting


class GpuMemoryBusy(BusyError):
    """The session would fit on this GPU, but other processes hold the memory it needs now: no fault
    of the problem's, and no verdict; cutegen measures again later (the judge's busy retries), and
    bench records the task as crashed (rerun with --retry-crashed), not as a broken problem."""


def others_hold_bytes() -> int:
    """Device memory of the current CUDA device that other programs hold: by the driver's process list
    where it names them (listed_others_bytes), else what is neither free, nor this process's torch cache,
    nor its shared buffers (cuMemAlloc'd outside the cache), nor RUNNER_RESERVE_BYTES per runner still
    running -- which then still includes this process's own context (CONTEXT_RESERVE_BYTES allows for
    it). 0 without CUDA."""
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return 0
    listed = listed_others_bytes(torch.cuda.current_device())
    if listed is not None:
        return listed
    free, total = torch.cuda.mem_get_info()
    own = torch.cuda.memory_reserved() + shared_buffers.live_bytes() + RUNNER_RESERVE_BYTES * runner_link.live_runners()
    return max(0, total - free - own)


def listed_others_bytes(index: int, probe=None):
    """What the driver's process list says every process but this worker and those it started hold on
    device `index`. The runners are the judge's own: on an H100 (2026-12-05) the worker's and its runner's
    contexts, 1.2 GiB together, read as "other processes" by the arithmetic above, so a KernelBench-size
    softmax that ran out of memory was retried as a busy machine three times and then given up. None when
    the list cannot say: no NVML or nvidia-smi, another PID namespace's numbers (this worker not among
    them), or a process listed without its memory."""
    if probe is None:
        probe = gpu_probe.open_probe(index)[0]
    if probe is None:
        return None
    try:
        listed = probe.processes()
    except gpu_probe.ProbeError:
        return None
    own = os.getpid()
    if own not in {pid for pid, _ in listed}:
        return None
    held = 0
    for pid, used in listed:
        if pid == own or gpu_share.descends_from(pid, own):
            continue
        if used is None:
            return None
        held += used
    return held


def out_of_memory_error(path: str, what: str, exc: BaseException):
    """For CUDA running out of memory in the user's code: a GpuMemoryBusy while other processes hold more
    than a context's worth of it (another task's problem, another user's job); a ProblemError naming the
    judge's own buffers while they are live (the session keeps the inputs and outputs it shares with the
    runner beside the reference's work: the problem is too large to judge on this GPU, though it may run
    in PyTorch); None otherwise (then it is the problem's own size, its error)."""
    if not isinstance(exc, torch.cuda.OutOfMemoryError):
        return None
    held = others_hold_bytes()
    if held > CONTEXT_RESERVE_BYTES:
        return GpuMemoryBusy(f"{path}: {what} ran out of GPU memory while other processes held {held / GIB:.1f} GiB "
                             "of it (nvidia-smi lists them); run again when they are done")
    own = shared_buffers.live_bytes()
    if own == 0:
        return None
    total = torch.cuda.mem_get_info()[1] if torch.cuda.is_available() and torch.cuda.is_initialized() else 0
    of = f" of the GPU's {total / GIB:.1f} GiB" if total else ""
    return ProblemError(f"{path}: {what} ran out of GPU memory while the judge's buffers shared with the kernel held "
                        f"{own / GIB:.1f} GiB{of}{_torch_side(exc)}: judging this problem needs a GPU with more memory "
                        "(its inputs, two output sets and the reference's work side by side)")


def _torch_side(exc: BaseException) -> str:
    """What PyTorch asked for when it ran out, and what it held: which of the judge's steps needed the memory
    (a float64 reference is twice an fp32 output) and whether fragmentation rather than use left it short."""
    asked = re.search(r"Tried to allocate ([0-9.]+ [KMGT]?i?B)", str(exc))
    held = ""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        held = (f"{torch.cuda.memory_allocated() / GIB:.1f} GiB allocated by PyTorch, "
                f"{torch.cuda.memory_reserved() / GIB:.1f} GiB reserved")
    parts = ([f"PyTorch asked for {asked.group(1)}"] if asked else []) + ([held] if held else [])
    return f" ({'; '.join(parts)})" if parts else ""


def check_fits(path: str, estimate: dict, device: torch.device, copies: str = "device", runners: int = 1) -> None:
    """Raises before allocating when a runner session's peak (session_bytes, with the private copies of timed
    outputs where `copies` says) cannot fit in the device's free memory: the problem's fault when it could not
    fit on this device at all, the machine's when other processes hold the memory."""
    free, total = device_memory(device)
    need = session_bytes(estimate, device, copies, runners)
    if need <= free:
        return
    if need + CONTEXT_RESERVE_BYTES <= total:
        raise GpuMemoryBusy(
            f"{path}: judging a kernel needs {need / GIB:.1f} GiB of {device} memory and {free / GIB:.1f} of its "
            f"{total / GIB:.1f} GiB are free: other processes hold the rest (nvidia-smi lists them); run again when "
            "they are done")
    copies_words = {"device": " and private copies of timed outputs",
                    "host": " and the output set a full audit brings back from host memory", "none": ""}
    raise ProblemError(
        f"{path}: judging a kernel needs {need / GIB:.1f} GiB of {device} memory (the shared inputs, parameters and "
        f"two output sets, a staged copy of the inputs beside the reference's workspace"
        f"{copies_words[copies]}) but {free / GIB:.1f} GiB is free; make the problem's tensors smaller")


def host_memory_available() -> int:
    pages = os.sysconf("SC_AVPHYS_PAGES")
    return pages * os.sysconf("SC_PAGE_SIZE")


def place_audit_copies(path: str, estimate: dict, device: torch.device) -> str:
    """Where a timed session keeps its private copies of timed outputs (candidate_session.py): "device"
    when the whole session fits on the GPU; "host" (pinned memory) when only those copies do not -- a
    KernelBench-size softmax (6 GiB tensors, a float64 reference) ran out of an H100's 80 GB with
    them on the device (2026-12-05), and they are 18 GiB of it; otherwise raises as check_fits does.
    The copies are written after every timed call alike, so where they live is the same for every call.
    (Each full audit still brings its copy back to the device for its check: session_bytes counts it.)
    CUTEGEN_AUDIT_COPIES=host (an experiment's switch; `auto` is the default) puts them on the host on a GPU
    whatever fits: what the rest of a session needs, and costs, with them there."""
    where = os.environ.get("CUTEGEN_AUDIT_COPIES", "auto")
    if where not in ("auto", "host"):
        raise RequestError(f"CUTEGEN_AUDIT_COPIES={where!r}: expected auto or host")
    if where == "auto" or device.type != "cuda":
        try:
            check_fits(path, estimate, device)
            return "device"
        except (ProblemError, GpuMemoryBusy):
            if device.type != "cuda":
                raise
    check_fits(path, estimate, device, copies="host")  # not even with them on the host: its error
    copies = estimate.get("audit_copies_bytes", 0)
    available = host_memory_available()
    if copies + HOST_MARGIN_BYTES > available:
        raise ProblemError(
            f"{path}: judging a kernel on this GPU needs its private copies of timed outputs ({copies / GIB:.1f} GiB) "
            f"in host memory, and {available / GIB:.1f} GiB is available; free host memory or use a GPU with more "
            "memory")
    return "host"


def workspace_cap(estimate: dict, device: torch.device, slot_allocated: bool, copies: str = "device") -> tuple:
    """(cap, why): the most workspace a kernel may have now -- the problem's cap, or less when the
    free memory minus the rest of the session (its slot and audit copies unless already allocated, the
    larger of a check and a staging: transient_bytes, a full audit's output set when the copies are on the
    host) is smaller -- and the words that say which limit it is."""
    free, _ = device_memory(device)
    rest = transient_bytes(estimate)
    if copies == "host":
        rest += output_bytes(estimate)
    if not slot_allocated:  # a candidate session allocates the private audit copies with its slot
        rest += estimate["slot_bytes"] + (estimate.get("audit_copies_bytes", 0) if copies == "device" else 0)
    fits = max(0, free - rest)
    cap = estimate["workspace_cap_bytes"]
    if fits < cap:
        return fits, f"what is free of {device} memory beside the rest of the session"
    return cap, (f"{WORKSPACE_FACTOR}x the problem's input and output bytes, at least {WORKSPACE_FLOOR // MIB} MiB, "
                 f"at most {WORKSPACE_CEILING // (1 << 30)} GiB")


def describe_bytes(n: int) -> str:
    """1536 -> '1536 bytes (1.5 KiB)': exact, and readable."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n} bytes ({n / size:.1f} {unit})"
    return f"{n} bytes"
