"""How much CPU time the runner used inside a call: the judge's evidence of host computing.

A candidate may copy its inputs to the host inside forward(), compute the answer on the CPU, copy it
back and launch a token CuTe kernel beside it: right values, a time that honestly includes the host
work, and no GPU kernel doing it. The runner's CPU time shows it. It is read from the worker, never
from the runner: the process CPU clock of the runner's pid (clock_gettime on the clock id
clock_getcpuclockid(3) makes, CLOCK_PROCESS_CPUTIME_ID for another process) is the kernel's per-thread
accounting summed over every thread of the process, the driver's included. For a thread of another process
that is running on another CPU as it is read, that sum is as of the thread's last tick or scheduler event
(the kernel does not interrupt it to bring it up to date): up to a tick, 1-4 ms, old. So the runner's spin
for the next command yields on every empty read (src/run/command_reader.h), and both readings, just
before a command and just after its reply, find its count current to within one yield. Without the yields
the H200 showed honest calls of 0.03 ms "using" 2-4 ms and others none. No process can lower its own count.

What the runner itself spends inside a call is small only because it waits for the GPU asleep: in the
driver on blocking-sync events (`block`, the default, src/run/runner_job.h), not by spinning. Its wait still
costs some CPU (the wake-up, the event's bookkeeping), so the session measures the wait's share before the
candidate is loaded: a few long pings (the runner's memset repeated for a millisecond or more, its wait
around it), the runner's CPU time over their round trip (`wait_share`: 0.13 on the H200). Where the share is
above MAX_WAIT_SHARE the wait costs too much to tell host work from it, and the check is off
(`host_cpu: "costly_wait"`: the 10 us polls of CUTEGEN_RUNNER_WAIT=poll, kept for the A/B, cost 0.5 on the
H200); under CUTEGEN_RUNNER_WAIT=spin the runner's CPU time is the call's wall time and the check is off too
(`host_cpu: "spin"`).

A call is *host-busy* when the runner's CPU time beyond its polled wait's share of the round trip,
cpu - wait_share x wall, exceeds HOST_CPU_BUDGET_NS or HOST_CPU_FRACTION of the round trip, whichever is
more (excess_ns, budget_ns). Honest host code per call is argument checks, a few launches, occupancy and
attribute queries, TMA descriptors: tens of microseconds. More than a tenth of the timed calls (and more
than two) host-busy is the verdict `host_compute` (candidate_session.py).
"""
import time

# A launch, an occupancy query or a TMA descriptor costs microseconds of host time (estimates, not yet
# measured here per call on a GPU; calls[].runner_cpu_ms records it), so honest host code is tens of
# microseconds; a host copy and compute of a 4 MB tensor is milliseconds (attacks/host_compute/host_computes_result.cu).
HOST_CPU_BUDGET_NS = 500_000
# Room for the polled wait's share to differ between the calibration and a call (a busier CPU, another
# core's idle states); host computing costs the whole call, its waits for its own copies included.
HOST_CPU_FRACTION = 0.25
# Above this share of the time waited, the polled wait itself is too costly to judge host work beside it.
MAX_WAIT_SHARE = 0.5
# CUTEGEN_RUNNER_WAIT=hybrid spins this long before it sleeps (kHybridSpin, src/run/polled_wait.h; a test holds
# the two equal): every call and ping pays up to this much CPU first, whatever its length, so it is not part
# of the share the sleeping wait costs per time waited.
HYBRID_SPIN_NS = 100_000
LONG_PING_REPEAT = 32  # memsets of the runner's 128 MiB buffer: 4 GiB, about 1.3 ms at an H200's bandwidth
WAIT_SHARE_PINGS = 3
CPUCLOCK_SCHED = 2  # the kernel's clock id layout (include/linux/posix-timers.h): ~pid << 3 | clock


def process_clock_id(pid: int) -> int:
    """What clock_getcpuclockid(pid) returns on Linux: the CPU clock of the whole process `pid`."""
    return ((~pid) << 3) | CPUCLOCK_SCHED


def process_cpu_ns(pid: int):
    """The CPU time all threads of process `pid` have used so far, or None when it cannot be read
    (the process is gone and reaped, a kernel without per-process CPU clocks)."""
    try:
        return time.clock_gettime_ns(process_clock_id(pid))
    except (OSError, OverflowError):
        return None


def budget_ns(wall_ns: int) -> float:
    """The runner CPU time beyond its wait that a call of `wall_ns` round trip may use: launches."""
    return max(HOST_CPU_BUDGET_NS, HOST_CPU_FRACTION * max(0, wall_ns))


def excess_ns(cpu_ns: int, wall_ns: int, wait_share: float, spin_ns: int = 0) -> float:
    """The runner's CPU time in a call beyond what its wait costs over the call's round trip: a spin of up to
    `spin_ns` first (the hybrid wait), then `wait_share` of the rest."""
    spun = min(spin_ns, max(0, wall_ns))
    return cpu_ns - spun - wait_share * max(0, wall_ns - spun)


def host_busy(cpu_ns, wall_ns: int, wait_share: float, spin_ns: int = 0) -> bool:
    return cpu_ns is not None and excess_ns(cpu_ns, wall_ns, wait_share, spin_ns) > budget_ns(wall_ns)


def wait_share(pings: list, spin_ns: int = 0):
    """The wait's CPU share per time waited from the long pings' (runner CPU ns, wall ns), less the spin of
    up to `spin_ns` each begins with; None if unreadable."""
    shares = sorted(max(0, cpu - min(spin_ns, wall)) / (wall - min(spin_ns, wall))
                    for cpu, wall in pings if cpu is not None and wall > spin_ns)
    if not shares or len(shares) < len(pings):
        return None
    return shares[len(shares) // 2]


def too_many(busy_count: int, total: int) -> bool:
    """More than a tenth of the timed calls, and more than two: the rule of the overrun check too."""
    return busy_count > max(2, total // 10)


def host_compute_message(busy_count: int, total: int, cpu_ms: list, wall_ms: list) -> str:
    worst = max(cpu_ms) if cpu_ms else 0.0
    typical = sorted(cpu_ms)[len(cpu_ms) // 2] if cpu_ms else 0.0
    wall = sorted(wall_ms)[len(wall_ms) // 2] if wall_ms else 0.0
    return (f"in {busy_count} of {total} timed calls the kernel's process used more CPU time than launching takes "
            f"(median {typical:.3f} ms, up to {worst:.3f} ms, of calls taking {wall:.3f} ms; beyond what its wait for "
            f"the GPU costs, the budget is the larger of {HOST_CPU_BUDGET_NS / 1e6:.1f} ms and {HOST_CPU_FRACTION:.0%} "
            "of the call): the host computed what a GPU kernel must. Do the work in CuTe kernels; the host code may "
            "only check arguments and launch them")
