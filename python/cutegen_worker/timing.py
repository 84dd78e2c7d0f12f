"""Baseline timing of the reference model (eager and torch.compile), the way the runner times candidates.

Each timed run: flush L2 by writing a buffer larger than it, synchronize, record a start event,
run on inputs rotated among the timing sets (so nothing can be served from a cache of the previous
call), record an end event, synchronize. Warm-up runs (and torch.compile's compilation) come first.
On the CPU (tests) the host clock replaces the events so the same code path runs.

Results are cached by problem file hash, GPU name, torch version, the timing parameters and the
shapes: eager and compiled baselines of a problem do not change between cutegen runs on one machine.
"""
import hashlib
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass

import numpy as np
import torch

from . import compare, cpu_wait, gpu_share
from .errors import BusyError
from .reference import disable_tf32

MODES = ("eager", "compile")
_CUDA_FLUSH_BYTES = 256 << 20  # larger than any current GPU's L2 (H200: 60 MiB)
_HOST_FLUSH_BYTES = 8 << 20  # keeps CPU tests fast; host timings are for testing the path only
# Bumped when a cached time would no longer be measured the same way. 2: `bench` lanes used to load
# other problems (inputs, references) on a GPU while it timed a baseline, inflating eager times by up
# to 2x on the H200 (benchmarks/results.md); those must not be served.
# 3: `bench` built torch.compile outside the GPU's lock, so its first run autotuned beside another slot's
# timing (compiled ELU 12% slow, benchmarks/results.md), and runs that waited for a CPU counted.
_CACHE_VERSION = 3


@dataclass
class Settings:
    warmup_ms: float = 100.0
    runs: int = 100
    cache_dir: str = None
    precision: str = compare.DEFAULT_PRECISION


def device_name(device: torch.device) -> str:
    """The name calibrations and baseline caches are keyed on: the GPU's name, or "cpu"."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "cpu"


class CudaClock:
    """Times one call the way cutegen-runner times a candidate: flush L2 with a 256 MiB write,
    synchronize the device, events on the current stream around the call, synchronize again.
    Synchronizing before each call matters for fairness: it puts the launch latency of the first
    kernel inside the timed region for the baseline exactly as it is for a candidate, instead of
    letting back-to-back launches hide it."""

    def __init__(self, device: torch.device, flush_bytes: int = _CUDA_FLUSH_BYTES):
        self.device = device
        self.flush_buffer = torch.empty(flush_bytes, dtype=torch.uint8, device=device)
        self.times = []
        # Per run, how long this thread waited for a CPU between its events (cpu_wait.py): a launch
        # that waits leaves the GPU idle inside the timed region and the baseline looks slower, the
        # candidate's speedup larger than it is.
        self.waits = []

    def sync(self):
        torch.cuda.synchronize(self.device)

    def time(self, fn):
        self.flush_buffer.fill_(len(self.times) & 0xFF)
        self.sync()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        w0 = cpu_wait.own_thread_ns()
        start.record()
        fn()
        end.record()
        self.sync()
        w1 = cpu_wait.own_thread_ns()
        self.times.append(start.elapsed_time(end))
        self.waits.append(None if w0 is None or w1 is None else w1 - w0)

    def collect(self) -> list:
        times, self.times = self.times, []
        return times

    def collect_waits(self) -> list:
        waits, self.waits = self.waits, []
        return waits


class HostClock:
    """The same sequence on the CPU (tests): host clock instead of events, a small flush."""

    def __init__(self, flush_bytes: int = _HOST_FLUSH_BYTES):
        self.flush_buffer = torch.empty(flush_bytes, dtype=torch.uint8)
        self.times = []

    def sync(self):
        pass

    def time(self, fn):
        self.flush_buffer.fill_(len(self.times) & 0xFF)
        start = time.perf_counter()
        fn()
        self.times.append((time.perf_counter() - start) * 1e3)

    def collect(self) -> list:
        times, self.times = self.times, []
        return times

    def collect_waits(self) -> list:
        """No CPU-wait check for host timings: they only exercise the code path (and CI's machines are
        busy by design)."""
        return []


def make_clock(device: torch.device):
    return CudaClock(device) if device.type == "cuda" else HostClock()


def summarize(times_ms: list) -> dict:
    q25, q75 = np.percentile(times_ms, [25, 75])
    return {"median_ms": statistics.median(times_ms), "min_ms": min(times_ms), "max_ms": max(times_ms),
            "iqr_ms": float(q75 - q25), "runs": len(times_ms)}


def measure(fn, input_sets: list, settings: Settings, clock) -> dict:
    """Warm-up for settings.warmup_ms (at least one call), then settings.runs timed calls."""
    calls = 0
    start = time.perf_counter()
    while True:
        fn(*input_sets[calls % len(input_sets)])
        calls += 1
        clock.sync()
        if (time.perf_counter() - start) * 1e3 >= settings.warmup_ms:
            break
    for i in range(settings.runs):
        values = input_sets[(calls + i) % len(input_sets)]
        clock.time(lambda: fn(*values))
    times, waits = clock.collect(), clock.collect_waits()
    if waits:
        # Runs in which this thread waited for a CPU timed the machine's load as well: left out, and
        # with too many of them there is no baseline (the worker is ours: leaving runs out favours
        # nobody; keeping them would inflate the speedups cutegen reports).
        kept = [t for t, w in zip(times, waits) if not cpu_wait.disturbed(w, t * 1e6)]
        if cpu_wait.too_many(len(times) - len(kept), len(times)):
            raise cpu_wait.CpuBusy(cpu_wait.busy_message("timed runs", len(times) - len(kept), len(times),
                                                         [w / 1e6 for w in waits if w is not None]))
        result = summarize(kept)
        if len(kept) < len(times):
            result["disturbed_runs"] = len(times) - len(kept)
        return result
    return summarize(times)


def _precision_flags(precision: str):
    """The baseline computes as a candidate is allowed to: fp32 matmuls use TF32 only when the
    policy lets candidates do so (tf32, bf16), never under `strict`."""
    allow = precision in ("tf32", "bf16")
    return {"allow_tf32": allow, "matmul_precision": "high" if allow else "highest"}


def _set_precision(precision: str) -> None:
    flags = _precision_flags(precision)
    torch.backends.cuda.matmul.allow_tf32 = flags["allow_tf32"]
    torch.backends.cudnn.allow_tf32 = flags["allow_tf32"]
    torch.set_float32_matmul_precision(flags["matmul_precision"])


def _error(exc: Exception) -> dict:
    # A baseline torch cannot build or run is a fact to report, not a failed request.
    # Out of memory and a busy machine (CPU or GPU) may not happen next time: such errors are not cached.
    return {"error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:1500]}",
            "transient": isinstance(exc, (torch.OutOfMemoryError, BusyError))}


def measure_alone(fn, input_sets: list, settings: Settings, clock, device) -> dict:
    """measure(), between two checks that no other program works on the GPU (gpu_share.py): another
    process's kernels would slow the baseline and inflate every speedup reported against it, and a
    baseline is cached. The worker is the only process of the judge's here (no runner)."""
    share = gpu_share.for_device(device)
    if share is None:
        return measure(fn, input_sets, settings, clock)
    clock.sync()
    share.check("checked before the baseline was timed", ())
    since = gpu_share.now_us()
    result = measure(fn, input_sets, settings, clock)
    clock.sync()
    share.check("checked after the baseline was timed", (), since)
    return result


@dataclass
class PreparedCompile:
    """torch.compile's result for one problem and precision, built before the timing starts.
    `cutegen bench` compiles while another task holds the GPU for its timed runs (compilation is
    CPU work), then times under the GPU's lock without paying for the compile there."""
    problem: object
    precision: str
    compiled: object = None
    error: dict = None


def compile_model(problem, example_inputs: list, precision: str) -> PreparedCompile:
    """Compiles the problem's model and runs it once on `example_inputs` (dynamo compiles on the
    first call; failures surface there)."""
    _set_precision(precision)
    torch._dynamo.reset()  # no compiled code or guards left from an earlier problem
    try:
        with torch.no_grad():
            compiled = torch.compile(problem.model)
            compiled(*example_inputs)
        return PreparedCompile(problem, precision, compiled=compiled)
    except Exception as exc:
        torch._dynamo.reset()
        return PreparedCompile(problem, precision, error=_error(exc))
    finally:
        disable_tf32()


def _time_mode(problem, mode: str, input_sets: list, settings: Settings, clock,
               prepared: PreparedCompile = None) -> dict:
    _set_precision(settings.precision)
    try:
        if mode == "eager":
            return measure_alone(problem.model, input_sets, settings, clock, problem.device)
        if prepared is None or prepared.problem is not problem or prepared.precision != settings.precision:
            prepared = compile_model(problem, input_sets[0], settings.precision)
            _set_precision(settings.precision)  # compile_model leaves TF32 off
        if prepared.error is not None:
            return dict(prepared.error)
        return measure_alone(prepared.compiled, input_sets, settings, clock, problem.device)
    except Exception as exc:
        return _error(exc)
    finally:
        if mode == "compile":
            torch._dynamo.reset()  # drops guards that hold the timing inputs
        disable_tf32()


def cache_key(problem, mode: str, settings: Settings, n_sets: int) -> dict:
    """Everything the measurement depends on. The shapes are in the key because the same file can
    define other sizes (module constants read from the environment, e.g. CUTEGEN_PROBLEM_SCALE)."""
    meta = problem.metadata
    return {"version": _CACHE_VERSION, "problem_sha256": problem.file_sha256, "gpu": device_name(problem.device),
            "torch": torch.__version__, "cuda": torch.version.cuda, "mode": mode, "precision": settings.precision,
            "warmup_ms": settings.warmup_ms, "runs": settings.runs, "timing_sets": n_sets,
            "inputs": [[i.get("dtype"), i.get("shape", i.get("value"))] for i in meta["inputs"]],
            "params": [[p["dtype"], p["shape"]] for p in meta["params"]]}


def _cache_path(cache_dir: str, key: dict) -> str:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return os.path.join(cache_dir, f"baseline-{digest}.json")


def cache_read(cache_dir, key):
    if not cache_dir:
        return None
    try:
        with open(_cache_path(cache_dir, key), encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None  # absent or half-written by a crashed writer: measure again
    return entry.get("result") if entry.get("key") == key else None


def cache_write(cache_dir, key, result) -> None:
    if not cache_dir:
        return
    os.makedirs(cache_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".baseline-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"key": key, "result": result}, f, indent=1)
    os.replace(tmp, _cache_path(cache_dir, key))  # atomic: a concurrent reader sees old or new


def all_cached(problem, modes: list, settings: Settings, n_sets: int) -> bool:
    """Whether time_baselines would answer every mode from the cache."""
    return all(cache_read(settings.cache_dir, cache_key(problem, mode, settings, n_sets)) is not None for mode in modes)


def time_baselines(problem, make_sets, n_sets: int, modes: list, settings: Settings,
                   prepared: PreparedCompile = None) -> dict:
    """{mode: stats or {"error"}, "cached": all modes came from the cache}. A compile error is
    cached like a measurement (recompiling to fail again costs minutes per candidate), except an
    out-of-memory one, which may not happen next time. `prepared` (from compile_model) is used
    for the compile mode when it belongs to this problem and precision. `make_sets()` draws the
    `n_sets` input sets, only once a mode is not cached: at KernelBench sizes drawing them was
    0.4 s of every passing evaluation whose baselines all came from the cache."""
    answer, all_cached, clock, seconds, input_sets = {}, True, None, {}, None
    for mode in modes:
        key = cache_key(problem, mode, settings, n_sets)
        result = cache_read(settings.cache_dir, key)
        if result is None:
            all_cached = False
            if input_sets is None:
                input_sets = make_sets()
            started = time.perf_counter()
            clock = clock or make_clock(problem.device)
            with torch.no_grad():
                result = _time_mode(problem, mode, input_sets, settings, clock, prepared)
            # What measuring it cost (the compile mode's includes torch.compile's compile and first run):
            # `cutegen bench` holds the GPU for it, so it bounds a whole level's throughput.
            seconds[mode] = time.perf_counter() - started
            if not result.pop("transient", False):
                cache_write(settings.cache_dir, key, result)
        answer[mode] = result
    answer["cached"] = all_cached
    if seconds:
        answer["seconds"] = seconds
    return answer
