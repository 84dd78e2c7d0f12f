"""The worker refuses, before allocating, a session that cannot fit, with a message the user can act on."""
import pytest
import torch

from conftest import SMALL, WorkerError, problem_path
from cutegen_worker import memory
from cutegen_worker.errors import ProblemError

GIB = 1 << 30
ESTIMATE = {"slot_bytes": 5 * GIB, "staged_bytes": 2 * GIB, "check_workspace_bytes": 4 * GIB}


def free(monkeypatch, nbytes):
    monkeypatch.setattr(memory, "device_memory", lambda device: (nbytes, 2 * nbytes))


def test_a_session_that_fits_passes(monkeypatch):
    free(monkeypatch, 11 * GIB)
    memory.check_fits("p.py", ESTIMATE, torch.device("cpu"))


def test_a_session_that_does_not_fit_is_the_problems_fault_and_says_the_sizes(monkeypatch):
    monkeypatch.setattr(memory, "device_memory", lambda device: (10 * GIB, 11 * GIB))  # an empty 11 GiB GPU
    with pytest.raises(ProblemError) as error:
        memory.check_fits("p.py", ESTIMATE, torch.device("cpu"))
    assert "needs 11.0 GiB" in str(error.value) and "10.0 GiB is free" in str(error.value)


def test_a_session_that_would_fit_but_for_other_processes_is_the_machines_not_the_problems(monkeypatch):
    """On an H200 shared by eight bench tasks, KernelBench problems were recorded as broken because the
    others held the memory: that is a busy machine (retried, then `crashed`), never a problem_error."""
    monkeypatch.setattr(memory, "device_memory", lambda device: (10 * GIB, 140 * GIB))
    with pytest.raises(memory.GpuMemoryBusy) as error:
        memory.check_fits("p.py", ESTIMATE, torch.device("cpu"))
    assert error.value.kind == "busy" and not isinstance(error.value, ProblemError)
    assert "needs 11.0 GiB" in str(error.value) and "10.0 of its 140.0 GiB are free" in str(error.value)


def test_the_load_answer_reports_the_sizes(worker, small):
    meta = worker.load(problem_path("layernorm"))
    rows, hidden = 4096 // SMALL, 8192 // SMALL
    params = 3 * hidden * 4  # weight, bias, gain
    assert meta["memory"]["slot_bytes"] == rows * hidden * 4 * 3 + params  # input + two output sets + params
    assert meta["memory"]["staged_bytes"] == rows * hidden * 4 + params


def test_evaluate_candidate_checks_before_allocating(worker, small, monkeypatch):
    worker.load(problem_path("relu"))
    free(monkeypatch, 1024)
    with pytest.raises(WorkerError) as error:
        worker.call("evaluate_candidate", runner=["r"], library="l", trials=[{"seed": 1}], warmup=0, runs=0,
                    call_timeout_s=1.0, work_dir="/tmp", fake_runner={"mode": "reference"})
    assert error.value.kind == "problem" and "GiB" in error.value.message


def test_running_out_of_memory_others_hold_is_the_machines_fault(monkeypatch):
    """forward() running out of GPU memory while other processes hold much of it (bench's neighbours on
    the H200 before release_gpu, another user's job) is no verdict on the problem."""
    from cutegen_worker import problem_loader
    oom = torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.00 GiB.")
    monkeypatch.setattr(memory, "others_hold_bytes", lambda: 55 * GIB)
    busy = problem_loader.user_code_error("p.py", "forward()", oom, "fix forward()")
    assert isinstance(busy, memory.GpuMemoryBusy) and busy.kind == "busy"
    assert "other processes held 55.0 GiB" in str(busy)
    # Alone on the GPU, the problem is simply too large: its own error.
    monkeypatch.setattr(memory, "others_hold_bytes", lambda: 0)
    own = problem_loader.user_code_error("p.py", "forward()", oom, "fix forward()")
    assert isinstance(own, ProblemError) and "OutOfMemoryError" in str(own)
    # Any other exception stays the problem's.
    monkeypatch.setattr(memory, "others_hold_bytes", lambda: 55 * GIB)
    assert isinstance(problem_loader.user_code_error("p.py", "forward()", ValueError("x"), "fix"), ProblemError)


def fake_cuda(monkeypatch, free_bytes, total_bytes, reserved_bytes):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *a: (free_bytes, total_bytes))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda *a: reserved_bytes)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(memory, "listed_others_bytes", lambda index: None)  # no driver list: the arithmetic


def test_the_judges_own_shared_buffers_are_not_other_processes(monkeypatch):
    """KernelBench 76 on an H100 (80 GB), 2026-12-05: the reference ran out of memory while the worker's own
    shared buffers (cuMemAlloc'd beside torch's cache: the inputs and two output sets, 20 GiB) held the rest, and
    the judge called it "other processes held 20.0 GiB" -- a busy machine, to retry later, when the session
    simply needs more memory than that GPU has."""
    from cutegen_worker import problem_loader, shared_buffers
    fake_cuda(monkeypatch, free_bytes=1 * GIB, total_bytes=80 * GIB, reserved_bytes=58 * GIB)
    monkeypatch.setattr(shared_buffers, "live_bytes", lambda: 20 * GIB)
    assert memory.others_hold_bytes() == 1 * GIB  # the context and nothing else
    oom = torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 11.00 GiB.")
    own = problem_loader.user_code_error("p.py", "forward()", oom, "fix forward()")
    assert isinstance(own, ProblemError) and own.kind == "problem"
    assert str(own) == ("p.py: forward() ran out of GPU memory while the judge's buffers shared with the kernel held "
                        "20.0 GiB of the GPU's 80.0 GiB: judging this problem needs a GPU with more memory (its "
                        "inputs, two output sets and the reference's work side by side)")
    # Another process's 30 GiB beside them is still the machine's: busy, and only its share is named.
    fake_cuda(monkeypatch, free_bytes=1 * GIB, total_bytes=80 * GIB, reserved_bytes=29 * GIB)
    busy = problem_loader.user_code_error("p.py", "forward()", oom, "fix forward()")
    assert isinstance(busy, memory.GpuMemoryBusy) and "other processes held 30.0 GiB" in str(busy)


def test_shared_buffers_count_their_live_bytes_until_freed(monkeypatch):
    from cutegen_worker import shared_buffers

    class Driver:
        def __init__(self):
            self.freed = []

        def alloc(self, ordinal, nbytes):
            return 4096

        def ipc_handle(self, ordinal, ptr):
            return b"h" * 64

        def free(self, ordinal, ptr):
            self.freed.append(ptr)

    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    before = shared_buffers.live_bytes()
    driver = Driver()
    block = shared_buffers._DeviceAllocation(driver, 0, 3 << 20)  # rounded up to whole 2 MiB pages
    assert shared_buffers.live_bytes() == before + (4 << 20)
    del block
    assert driver.freed == [4096] and shared_buffers.live_bytes() == before


class ListingProbe:
    """The driver's process list as gpu_probe's probes give it: (pid, bytes or None)."""

    def __init__(self, listed):
        self.listed = listed

    def processes(self):
        return self.listed


def test_the_judges_runners_are_not_other_processes_by_the_drivers_list():
    """An H100 (80 GB), 2026-12-05: the KernelBench-size softmax ran out of memory while the worker's and its
    runner's contexts held 1.2 GiB, which the arithmetic (used - torch's cache - shared buffers) called "other
    processes": above the one context it allows, so a busy machine, retried three times and given up. By the
    driver's list, the worker and every process it started are the judge's own."""
    import os
    import subprocess
    child = subprocess.Popen(["sleep", "30"])  # stands in for a runner: the worker's child
    try:
        own = os.getpid()
        probe = ListingProbe([(own, 700 << 20), (child.pid, 600 << 20)])
        assert memory.listed_others_bytes(0, probe) == 0
        stranger = 1  # init: never the worker's descendant
        probe = ListingProbe([(own, 700 << 20), (child.pid, 600 << 20), (stranger, 30 * GIB)])
        assert memory.listed_others_bytes(0, probe) == 30 * GIB
        # A process listed without its memory: the list cannot say, the arithmetic answers.
        assert memory.listed_others_bytes(0, ListingProbe([(own, 1), (stranger, None)])) is None
        # Another PID namespace's numbers (this worker not among them): nobody can be told apart.
        assert memory.listed_others_bytes(0, ListingProbe([(stranger, 5 * GIB)])) is None
    finally:
        child.kill()
        child.wait()


def test_out_of_memory_beside_only_the_judges_own_processes_is_no_busy_machine(monkeypatch):
    """With the list saying no one else holds memory, running out beside the shared buffers is the problem's
    size on this GPU (a ProblemError, a note inside a generalization trial), not a busy machine."""
    from cutegen_worker import problem_loader, shared_buffers
    fake_cuda(monkeypatch, free_bytes=1 * GIB, total_bytes=80 * GIB, reserved_bytes=57 * GIB)
    monkeypatch.setattr(shared_buffers, "live_bytes", lambda: 20 * GIB)
    monkeypatch.setattr(memory, "listed_others_bytes", lambda index: 0)
    assert memory.others_hold_bytes() == 0  # the arithmetic alone would say 2 GiB: two contexts
    oom = torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.00 GiB.")
    own = problem_loader.user_code_error("p.py", "forward()", oom, "fix forward()")
    assert isinstance(own, ProblemError) and "needs a GPU with more memory" in str(own)


def test_the_runners_own_context_is_counted_on_a_gpu(monkeypatch):
    """The runner is another process with a context and buffers of its own, started after the check: a
    session that fits only without them ran out of memory mid-way (an H100, 2026-12-05)."""
    monkeypatch.setattr(memory, "device_memory", lambda device: (11 * GIB, 80 * GIB))
    memory.check_fits("p.py", ESTIMATE, torch.device("cpu"))  # 11 GiB: fits on the CPU, no runner context
    with pytest.raises(memory.GpuMemoryBusy) as error:
        memory.check_fits("p.py", ESTIMATE, torch.device("cuda", 0))
    assert "needs 12.0 GiB" in str(error.value)


COPIES = dict(ESTIMATE, audit_copies_bytes=6 * GIB)  # 11 GiB without the copies, 12 with the runner


def test_private_copies_stay_on_the_device_when_the_session_fits(monkeypatch):
    monkeypatch.setattr(memory, "device_memory", lambda device: (18 * GIB, 80 * GIB))
    assert memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0)) == "device"


def test_private_copies_go_to_the_host_when_only_they_do_not_fit(monkeypatch):
    """KernelBench's softmax at its size on an H100: the session fits, its three 6 GiB copies do not."""
    monkeypatch.setattr(memory, "device_memory", lambda device: (13 * GIB, 13 * GIB + GIB // 2))
    monkeypatch.setattr(memory, "host_memory_available", lambda: 100 * GIB)
    assert memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0)) == "host"
    # Without room on the host either: one line that says which memory is short.
    monkeypatch.setattr(memory, "host_memory_available", lambda: 8 * GIB)
    with pytest.raises(ProblemError) as error:
        memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0))
    assert "6.0 GiB" in str(error.value) and "host memory" in str(error.value)
    # Not even without the copies: the session's own error, the copies left out of its sum.
    monkeypatch.setattr(memory, "device_memory", lambda device: (10 * GIB, 10 * GIB + GIB // 2))
    with pytest.raises(ProblemError) as error:
        memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0))
    assert "needs 12.0 GiB" in str(error.value) and "private copies" not in str(error.value)


def test_private_copies_on_the_host_still_audit_every_timed_call(worker, small, monkeypatch):
    """Where the copies live changes nothing the kernel could see or get away with: the session passes an
    honest runner, records where they were, and still fails a runner wrong on one timed call."""
    from test_every_call_checked import ONE_TRIAL, evaluate
    monkeypatch.setattr(memory, "place_audit_copies", lambda path, estimate, device: "host")
    honest = evaluate(worker, problem_path("relu"))
    assert honest["verdict"] == "pass", honest["reason"]
    assert honest["audits"]["copies"] == "host" and honest["audits"]["full"] == 2
    before = 2 * len(ONE_TRIAL) + 1
    wrong = evaluate(worker, problem_path("relu"), mode="zeros", only=[before + 3])
    assert wrong["verdict"] == "mismatch" and wrong["reason"].startswith("timed call 3 "), wrong["reason"]


def test_without_the_drivers_list_a_running_runner_is_still_the_judges_own(monkeypatch):
    """Where the driver names no processes, the arithmetic leaves out a runner's worth per runner still running:
    the H100's 1.2 GiB (the worker's context and its runner's) is then under the one context allowed."""
    from cutegen_worker import runner_link, shared_buffers
    mib = 1 << 20
    fake_cuda(monkeypatch, free_bytes=1 * GIB, total_bytes=80 * GIB, reserved_bytes=57 * GIB + 800 * mib)
    monkeypatch.setattr(shared_buffers, "live_bytes", lambda: 20 * GIB)
    monkeypatch.setattr(runner_link, "live_runners", lambda: 0)
    assert memory.others_hold_bytes() == 1248 * mib  # over one context: would read as another process's
    monkeypatch.setattr(runner_link, "live_runners", lambda: 1)
    assert memory.others_hold_bytes() == 224 * mib


def test_a_runner_counts_as_live_until_it_exits():
    import sys
    from cutegen_worker import runner_link
    before = runner_link.live_runners()
    runner = runner_link.SubprocessRunner([sys.executable, "-c", "import time; time.sleep(30)"], "/tmp", {}, 1.0)
    try:
        assert runner_link.live_runners() == before + 1
    finally:
        runner.kill()
    assert runner_link.live_runners() == before
