"""Host computing is a verdict: the runner's CPU time inside each timed call, read by the worker from the
kernel's accounting (cpu_time.py), beyond a launch budget is `host_compute`. The reading is checked
against real processes; the verdict with the test hooks' fake runner, which reports the CPU time a test
asks for (the real runner over pipes: test_runner_link.py; on a GPU: attacks/host_compute/host_computes_result.cu)."""
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import FAKE_RUNNER_FIRST_TIMED, ROOT, evaluate_relu_with_fake_runner
from cutegen_worker import cpu_time

FIRST_TIMED = FAKE_RUNNER_FIRST_TIMED


def evaluate(worker, runs=12, **fake):
    return evaluate_relu_with_fake_runner(worker, runs, **fake)


# ---- the reading -------------------------------------------------------------------------------------
def child(code: str) -> subprocess.Popen:
    """A Python process that runs `code` once told to "go", after its own start-up (not counted)."""
    p = subprocess.Popen([sys.executable, "-c", "import sys, time\nprint('ready', flush=True)\nsys.stdin.readline()\n"
                          + code + "\nsys.stdin.readline()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    return p


def test_another_processs_cpu_time_counts_its_computing_not_its_sleeping():
    spinner = child("start = time.process_time()\nwhile time.process_time() - start < 0.15: pass")
    sleeper = child("time.sleep(0.15)")
    try:
        before = {p.pid: cpu_time.process_cpu_ns(p.pid) for p in (spinner, sleeper)}
        for p in (spinner, sleeper):
            p.stdin.write(b"go\n")
            p.stdin.flush()
        deadline = time.monotonic() + 30
        # Until each has done its part (the spinner's 150 ms of CPU may take longer on a loaded machine).
        while cpu_time.process_cpu_ns(spinner.pid) - before[spinner.pid] < 150e6 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        spent = {p.pid: cpu_time.process_cpu_ns(p.pid) - before[p.pid] for p in (spinner, sleeper)}
    finally:
        for p in (spinner, sleeper):
            p.kill()
            p.wait()
    assert spent[spinner.pid] >= 150e6, spent
    assert spent[sleeper.pid] < 30e6, spent  # 150 ms asleep is no CPU time
    assert cpu_time.process_cpu_ns(spinner.pid) is None  # reaped: no number, not zero


def test_the_budget_is_launches_not_computing():
    ms = 1_000_000
    assert cpu_time.budget_ns(0.1 * ms) == cpu_time.HOST_CPU_BUDGET_NS == 0.5 * ms
    assert cpu_time.budget_ns(10 * ms) == 2.5 * ms  # a quarter of a long call
    share = 0.2  # the polled wait's CPU per time waited, as the calibration measured it
    assert not cpu_time.host_busy(0.3 * ms, 0.4 * ms, share)   # launches and argument checks of a short call
    assert not cpu_time.host_busy(None, 10 * ms, share)        # unreadable: no evidence either way
    assert cpu_time.host_busy(2.0 * ms, 2.1 * ms, share)  # attacks/host_compute/host_busy_loop.cu: 2 ms of host spin
    assert not cpu_time.host_busy(3 * ms, 10 * ms, share)      # a long call's wait, at a share above the calibration's
    assert cpu_time.host_busy(6 * ms, 10 * ms, share)          # 4 ms beyond the wait's share of a 10 ms call
    assert not cpu_time.host_busy(6 * ms, 10 * ms, 0.45)       # ... where the wait costs that much
    assert [cpu_time.too_many(n, 100) for n in (10, 11)] == [False, True]
    assert [cpu_time.too_many(n, 12) for n in (2, 3)] == [False, True]


def test_the_wait_share_is_the_median_long_ping_and_needs_every_reading():
    assert cpu_time.wait_share([(1, 10), (3, 10), (2, 10)]) == 0.2
    assert cpu_time.wait_share([(1, 10), (None, 10), (2, 10)]) is None
    assert cpu_time.wait_share([]) is None


def test_the_hybrid_waits_spin_is_a_fixed_cost_not_part_of_the_share():
    """Under CUTEGEN_RUNNER_WAIT=hybrid every call and ping first spins up to HYBRID_SPIN_NS. Counted into the
    share, the long pings' 0.1 ms would be forgiven again per millisecond of a long call; taken out, the share
    is the sleeping wait's and the spin is charged once."""
    us, ms = 1_000, 1_000_000
    spin, block = cpu_time.HYBRID_SPIN_NS, 0.13
    ping = lambda wall: (int(spin + block * (wall - spin)), wall)  # noqa: E731
    pings = [ping(1300 * us), ping(1310 * us), ping(1290 * us)]
    assert cpu_time.wait_share(pings, spin) == pytest.approx(block, abs=1e-6)
    naive = cpu_time.wait_share(pings)
    assert naive > block + 0.05  # what the share would be with the spin in it
    honest_10ms = spin + block * (10 * ms - spin)
    assert not cpu_time.host_busy(honest_10ms, 10 * ms, block, spin)
    # A 10 ms call with 2.6 ms of host work beside its wait: host-busy once the spin is not forgiven per ms...
    assert cpu_time.host_busy(honest_10ms + 2.6 * ms, 10 * ms, block, spin)
    # ... where the share measured with the spin in it would have let it through.
    assert not cpu_time.host_busy(honest_10ms + 2.6 * ms, 10 * ms, naive)
    # A call shorter than the spin spins all of it: no excess.
    assert cpu_time.excess_ns(40 * us, 40 * us, block, spin) == 0
    # The constant is the runner's (src/run/polled_wait.h).
    header = open(os.path.join(ROOT, "src", "run", "polled_wait.h")).read()
    assert re.search(r"kHybridSpin\{(\d+)\}", header).group(1) == str(spin // us)


# ---- the verdict -----------------------------------------------------------------------------------------
def test_a_kernel_whose_host_computes_every_call_is_host_compute(worker, small):
    result = evaluate(worker, cpu_ms=20.0)
    assert result["verdict"] == "host_compute", result["reason"]
    reason = result["reason"]
    assert "in 12 of 12 timed calls" in reason and "median 20.000 ms" in reason and "CuTe kernels" in reason, reason
    assert result["calibration"]["host_cpu"] == "checked"
    assert all(c["host_busy"] and c["runner_cpu_ms"] == pytest.approx(20.0) for c in result["calls"])


def test_light_host_work_per_call_passes(worker, small):
    """Launches, queries and descriptors: a few hundred microseconds at most, under the budget."""
    result = evaluate(worker, cpu_ms=0.3)
    assert result["verdict"] == "pass", result["reason"]
    assert result["time"]["host_busy_calls"] == 0
    assert [c["runner_cpu_ms"] for c in result["calls"]] == [pytest.approx(0.3)] * 12


def test_a_few_host_busy_calls_are_tolerated_as_overruns_are(worker, small):
    # Calls 3 and 7 of the timed ones (a page fault storm, a driver's housekeeping): not a tenth, not three.
    result = evaluate(worker, runs=20, cpu_ms=20.0, cpu_calls=[FIRST_TIMED + 3, FIRST_TIMED + 7])
    assert result["verdict"] == "pass", result["reason"]
    assert result["time"]["host_busy_calls"] == 2
    assert [i for i, c in enumerate(result["calls"]) if c["host_busy"]] == [3, 7]
    three = evaluate(worker, runs=20, cpu_ms=20.0, cpu_calls=[FIRST_TIMED + k for k in (1, 5, 9)])
    assert three["verdict"] == "host_compute" and "in 3 of 20 timed calls" in three["reason"]


def test_warm_up_and_trial_calls_are_not_judged(worker, small):
    """The first calls load the kernel's module (CUDA's lazy loading is host time): only timed calls count."""
    result = evaluate(worker, cpu_ms=20.0, cpu_calls=list(range(FIRST_TIMED)))
    assert result["verdict"] == "pass", result["reason"]


def test_hidden_work_is_named_before_host_computing(worker, small):
    result = evaluate(worker, cpu_ms=20.0, ms=4, event_ms=0.01)
    assert result["verdict"] == "hidden_work", result["reason"]


def test_the_spinning_wait_turns_the_check_off_and_says_so(worker, small, monkeypatch):
    monkeypatch.setenv("CUTEGEN_RUNNER_WAIT", "spin")
    result = evaluate(worker, cpu_ms=20.0)
    assert result["verdict"] == "pass", result["reason"]
    assert result["calibration"]["host_cpu"] == "spin" and "host_busy_calls" not in result["time"]
    monkeypatch.setenv("CUTEGEN_RUNNER_WAIT", "sleep")
    with pytest.raises(Exception, match="CUTEGEN_RUNNER_WAIT='sleep': expected one of hybrid, block, poll, spin"):
        evaluate(worker)


def test_the_calibration_measures_the_polled_waits_share_and_discounts_it(worker, small, monkeypatch):
    """The runner's wait for the GPU costs CPU too; measured on long pings before the load, it is taken off
    every call's CPU time. A kernel whose CPU time is 40 % of a long call is honest on a machine where the
    wait costs 30 % of the time waited (40 of some 95 ms), and host computing where it costs 1 %. Under the
    blocking wait: the fake runner reports a share with no spin in it, which the default (hybrid) would take
    its fixed spin out of (the hybrid test above)."""
    monkeypatch.setenv("CUTEGEN_RUNNER_WAIT", "block")
    costly = evaluate(worker, cpu_ms=40.0, ms=50, wait_share=0.3)
    assert costly["verdict"] == "pass", costly["reason"]
    assert costly["calibration"]["wait_share"] == pytest.approx(0.3, abs=0.01)
    cheap = evaluate(worker, cpu_ms=40.0, ms=50, wait_share=0.01)
    assert cheap["verdict"] == "host_compute", cheap["reason"]


def test_a_wait_too_costly_to_judge_beside_turns_the_check_off(worker, small):
    result = evaluate(worker, cpu_ms=20.0, wait_share=0.7)
    assert result["verdict"] == "pass", result["reason"]
    assert result["calibration"]["host_cpu"] == "costly_wait" and "host_busy_calls" not in result["time"]


def test_an_unreadable_cpu_clock_is_no_evidence(worker, small):
    result = evaluate(worker, cpu_ms=20.0, cpu_unreadable=True)
    assert result["verdict"] == "pass", result["reason"]
    assert result["calibration"]["host_cpu"] == "unavailable" and result["calibration"]["runner_cpu_ms"] is None


def test_the_runner_session_file_asks_for_the_blocking_wait(tmp_path, monkeypatch):
    """The real runner waits as the worker says (src/run/runner_job.h, GpuWait): block unless the A/B asks."""
    import json
    from cutegen_worker import candidate_session

    class Plan:
        runner, library, work_dir, call_timeout_s = ["/bin/true"], "/k.so", str(tmp_path), 1.0

    class Slot:
        class arena:
            class device:
                index = 0

        @staticmethod
        def session_refs():
            return {"inputs": [], "params": [], "outputs": [[]]}

    for setting, expected in ((None, "hybrid"), ("block", "block"), ("poll", "poll"), ("spin", "spin")):
        if setting:
            monkeypatch.setenv("CUTEGEN_RUNNER_WAIT", setting)
        link = candidate_session.default_link(Plan, Slot)
        session = link.proc.args[link.proc.args.index("--serve") + 1]
        with open(session) as f:
            assert json.load(f)["wait"] == expected
        link.kill()
