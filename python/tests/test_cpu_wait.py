"""A busy CPU must not become a verdict or a number: the run delay the kernel counts per thread
(cpu_wait.py), how the candidate session and the baselines use it. The runner is the test hooks'
fake, which reports the waits a test asks for; the reading itself is checked against real contention."""
import os
import subprocess
import sys
import time

import pytest

from conftest import FAKE_RUNNER_FIRST_TIMED, WorkerError, evaluate_relu_with_fake_runner, problem_path
from cutegen_worker import cpu_wait, timing

FIRST_TIMED = FAKE_RUNNER_FIRST_TIMED


def evaluate(worker, runs=20, **fake):
    return evaluate_relu_with_fake_runner(worker, runs, **fake)


# ---- the reading -------------------------------------------------------------------------------------
needs_schedstat = pytest.mark.skipif(cpu_wait.own_thread_ns() is None,
                                     reason="this kernel does not count run delays (/proc/self/task/*/schedstat)")


@needs_schedstat
def test_a_thread_sharing_its_cpu_with_a_spinning_process_has_waited():
    cpu = min(os.sched_getaffinity(0))
    spinner = subprocess.Popen([sys.executable, "-c", "import os, time\n"
                                f"os.sched_setaffinity(0, {{{cpu}}})\n"
                                "end = time.monotonic() + 1.5\n"
                                "while time.monotonic() < end: pass\n"])
    mask = os.sched_getaffinity(0)
    try:
        time.sleep(0.2)  # the spinner is running on `cpu`
        os.sched_setaffinity(0, {cpu})
        before = cpu_wait.own_thread_ns()
        end = time.monotonic() + 0.4
        while time.monotonic() < end:
            pass
        waited = cpu_wait.own_thread_ns() - before
        spinner_waited = cpu_wait.process_ns(spinner.pid)
    finally:
        os.sched_setaffinity(0, mask)
        spinner.kill()
        spinner.wait()
    # Two runnable threads on one CPU for 0.4 s: each waits about half of it.
    assert waited > 40e6, waited
    assert spinner_waited is not None and spinner_waited > 0
    assert cpu_wait.process_ns(spinner.pid) is None  # gone: no number, not zero


def test_what_counts_as_disturbed():
    assert not cpu_wait.disturbed(None, 1e6)
    assert not cpu_wait.disturbed(40_000, 1e6)       # a kernel thread's preemption
    assert cpu_wait.disturbed(2_000_000, 5e6)         # a lost time slice
    assert not cpu_wait.disturbed(150_000, 10e6)      # 1.5% of a long call
    assert [cpu_wait.too_many(d, 100) for d in (10, 11)] == [False, True]
    assert [cpu_wait.too_many(d, 12) for d in (2, 3)] == [False, True]
    assert cpu_wait.too_many(1, 1) and not cpu_wait.too_many(0, 0)


# ---- the candidate session -------------------------------------------------------------------------------
def test_timed_calls_that_waited_for_a_cpu_give_no_time_and_no_verdict(worker, small):
    with pytest.raises(WorkerError) as busy:
        evaluate(worker, wait_ms=3.0)
    assert busy.value.kind == "busy"
    message = str(busy.value)
    assert "20 of 20 timed calls" in message and "3.00 ms" in message and "fewer jobs" in message


def test_a_few_disturbed_calls_are_counted_in_the_time_but_are_no_evidence(worker, small):
    # Calls 3 and 7 waited as long as hidden work would make them: the verdict stays pass.
    result = evaluate(worker, wait_ms=5.0, wait_calls=[FIRST_TIMED + 3, FIRST_TIMED + 7])
    assert result["verdict"] == "pass", result["reason"]
    assert result["time"]["disturbed_calls"] == 2
    flagged = [i for i, c in enumerate(result["calls"]) if c["disturbed"]]
    assert flagged == [3, 7]
    assert result["calls"][3]["cpu_wait_ms"] == pytest.approx(5.0)
    assert result["calls"][0]["cpu_wait_ms"] == 0.0


def test_hidden_work_is_still_found_beside_a_few_disturbed_calls(worker, small):
    result = evaluate(worker, ms=4, event_ms=0.01, wait_ms=5.0, wait_calls=[FIRST_TIMED + 1])
    assert result["verdict"] == "hidden_work", result["reason"]


def test_a_calibration_that_waited_for_a_cpu_is_no_calibration(worker, small):
    with pytest.raises(WorkerError) as busy:
        evaluate(worker, wait_ping_ms=2.0)
    assert busy.value.kind == "busy" and "calibration rounds" in str(busy.value)


def test_the_calibration_says_how_waits_were_counted(worker, small):
    result = evaluate(worker, runs=4)
    assert result["calibration"]["cpu_wait"] == "schedstat"  # the fake always reports a number
    assert result["calibration"]["disturbed_rounds"] == 0


# ---- the baselines ----------------------------------------------------------------------------------------
class ScriptedClock:
    """A clock whose runs took `times` ms and waited `waits` ns for a CPU."""

    def __init__(self, times, waits):
        self.script, self.times = list(zip(times, waits)), []

    def sync(self):
        pass

    def time(self, fn):
        fn()
        self.times.append(self.script[len(self.times)])

    def collect(self):
        return [t for t, _ in self.times]

    def collect_waits(self):
        return [w for _, w in self.times]


def settings(runs):
    return timing.Settings(warmup_ms=0, runs=runs)


def test_baseline_runs_that_waited_are_left_out():
    times = [1.0] * 18 + [9.0, 9.0]
    waits = [0] * 18 + [8_000_000, 8_000_000]
    stats = timing.measure(lambda: None, [()], settings(20), ScriptedClock(times, waits))
    assert (stats["runs"], stats["max_ms"], stats["disturbed_runs"]) == (18, 1.0, 2)


def test_a_baseline_on_a_busy_cpu_is_an_error_that_is_not_cached(relu_loaded, tmp_path, monkeypatch):
    def busy(fn, input_sets, settings_, clock):
        raise cpu_wait.CpuBusy("the CPU was too busy to time on")
    monkeypatch.setattr(timing, "measure", busy)
    result = relu_loaded.call("time_baselines", modes=["eager"], warmup_ms=1, runs=3, cache_dir=str(tmp_path / "c"),
                              sets=2, seed=5)
    assert "too busy" in result["eager"]["error"]
    assert not (tmp_path / "c").exists() or not os.listdir(tmp_path / "c")


@pytest.fixture
def relu_loaded(worker, small):
    worker.load(problem_path("relu"))
    return worker
