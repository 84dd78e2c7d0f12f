"""How long a thread was ready to run but waited for a CPU: Linux's run delay (/proc/.../schedstat).

The judge's clock is this process's wall clock around a call that another process answers, and the
baselines' events see the GPU idle while this thread waits to launch the next kernel. When the
machine has more runnable work than CPUs (parallel compiles, other jobs), the worker or the runner
waits for a CPU inside that window and the measurement says more about the machine than about the
kernel: on an H200 with 16 nvcc processes beside it, an honest 0.56 ms ReLU came out at 7.2 ms and
was judged `hidden_work`. The kernel keeps this count per thread, outside any process's reach; a
candidate can only raise its own runner's (by competing for a CPU), which gets its measurement
refused, never made faster.

A call is *disturbed* when the waits during it exceed DISTURBED_NS plus DISTURBED_FRACTION of its
wall time; a measurement with more than a tenth of its calls disturbed (and at least three) is not
reported (CpuBusy), since its median can no longer be told from the machine's load.
"""
import threading

from .errors import BusyError

DISTURBED_NS = 50_000          # a kernel thread's preemption costs microseconds; a time slice lost, milliseconds
DISTURBED_FRACTION = 0.02


class CpuBusy(BusyError):
    """The machine was too busy to measure on: the answer is no number, with the reason."""


def run_delay_ns(path: str):
    """The run delay (second field) of a schedstat file, or None when it cannot be read (a kernel
    without CONFIG_SCHED_INFO, a process that has exited)."""
    try:
        with open(path, "rb") as f:
            fields = f.read().split()
        return int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def own_thread_ns():
    """The calling thread's run delay so far."""
    return run_delay_ns(f"/proc/self/task/{threading.get_native_id()}/schedstat")


def process_ns(pid: int):
    """The run delay of a process's main thread (the runner answers on its main thread)."""
    return run_delay_ns(f"/proc/{pid}/schedstat")


def disturbed(wait_ns, wall_ns) -> bool:
    return wait_ns is not None and wait_ns > DISTURBED_NS + DISTURBED_FRACTION * max(0, wall_ns)


def too_many(disturbed_count: int, total: int) -> bool:
    """More than a tenth (and more than two), or every one: nothing undisturbed left to judge by."""
    return disturbed_count > max(2, total // 10) or (total > 0 and disturbed_count == total)


def busy_message(what: str, disturbed_count: int, total: int, waits_ms: list) -> str:
    worst = max(waits_ms) if waits_ms else 0.0
    return (f"the CPU was too busy to time on: in {disturbed_count} of {total} {what} this process or the kernel's "
            f"waited for a CPU (up to {worst:.2f} ms each), so the times would measure the machine's load, not the "
            "kernel. Run again with fewer jobs beside it (cutegen bench/tune -j, parallel compiles, other programs)")
