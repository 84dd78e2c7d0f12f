"""The worker refuses, before allocating, a session that cannot fit, with a message the user can act on."""
import pytest
import torch

from conftest import SMALL, WorkerError, problem_path
from cutegen_worker import candidate_session, memory
from cutegen_worker.errors import ProblemError, RequestError

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
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda *a: reserved_bytes - 21 * GIB)
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
                        "20.0 GiB of the GPU's 80.0 GiB (PyTorch asked for 11.00 GiB; 37.0 GiB allocated by PyTorch, "
                        "58.0 GiB reserved): judging this problem needs a GPU with more memory (its inputs, two output "
                        "sets and the reference's work side by side)")
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
    session that fits only without them ran out of memory mid-way (an H100, 2026-12-05). (The 0.25 GiB beside
    it: the worker's L2 flush buffer.)"""
    monkeypatch.setattr(memory, "device_memory", lambda device: (11 * GIB, 80 * GIB))
    memory.check_fits("p.py", ESTIMATE, torch.device("cpu"))  # 11 GiB: fits on the CPU, no runner context
    with pytest.raises(memory.GpuMemoryBusy) as error:
        memory.check_fits("p.py", ESTIMATE, torch.device("cuda", 0))
    assert "needs 12.2 GiB" in str(error.value)


def test_a_screening_group_keeps_as_many_runners_as_free_memory_holds(monkeypatch):
    # 11 GiB for the slot and a check, 0.25 for the flush buffer, 1 GiB of context per runner.
    gpu = torch.device("cuda", 0)
    for free_gib, fitting in ((100, 8), (14, 2), (13.3, 2), (13.2, 1), (5, 1)):
        monkeypatch.setattr(memory, "device_memory", lambda device, f=free_gib: (int(f * GIB), 80 * GIB))
        assert memory.runners_that_fit(ESTIMATE, gpu, 8) == fitting, free_gib
    assert memory.runners_that_fit(ESTIMATE, torch.device("cpu"), 8) == 8  # no contexts on the CPU


COPIES = dict(ESTIMATE, audit_copies_bytes=6 * GIB)  # 11 GiB without the copies, 12.25 with the runner and flush


def test_private_copies_stay_on_the_device_when_the_session_fits(monkeypatch):
    monkeypatch.setattr(memory, "device_memory", lambda device: (19 * GIB, 80 * GIB))
    assert memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0)) == "device"


def test_private_copies_go_to_the_host_when_asked_whatever_fits(monkeypatch):
    monkeypatch.setattr(memory, "device_memory", lambda device: (19 * GIB, 80 * GIB))
    monkeypatch.setattr(memory, "host_memory_available", lambda: 100 * GIB)
    monkeypatch.setenv("CUTEGEN_AUDIT_COPIES", "host")
    assert memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0)) == "host"
    monkeypatch.setenv("CUTEGEN_AUDIT_COPIES", "device")
    with pytest.raises(RequestError, match="expected auto or host"):
        memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0))
    monkeypatch.setenv("CUTEGEN_AUDIT_COPIES", "auto")
    assert memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0)) == "device"


def test_private_copies_go_to_the_host_when_only_they_do_not_fit(monkeypatch):
    """KernelBench's softmax at its size on an H100: the session fits, its three 6 GiB copies do not."""
    monkeypatch.setattr(memory, "device_memory", lambda device: (15 * GIB, 15 * GIB + GIB // 2))
    monkeypatch.setattr(memory, "host_memory_available", lambda: 100 * GIB)
    assert memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0)) == "host"
    # Without room on the host either: one line that says which memory is short.
    monkeypatch.setattr(memory, "host_memory_available", lambda: 8 * GIB)
    with pytest.raises(ProblemError) as error:
        memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0))
    assert "6.0 GiB" in str(error.value) and "host memory" in str(error.value)
    # Not even with them on the host: the session's own error, with the one output set a full audit brings back
    # to the device (12.25 + 2 GiB) and not the copies.
    monkeypatch.setattr(memory, "device_memory", lambda device: (10 * GIB, 10 * GIB + GIB // 2))
    with pytest.raises(ProblemError) as error:
        memory.place_audit_copies("p.py", COPIES, torch.device("cuda", 0))
    assert "needs 14.2 GiB" in str(error.value) and "private copies of timed outputs" not in str(error.value)
    assert "the output set a full audit brings back from host memory" in str(error.value)


# KernelBench's softmax at its size (problems/softmax_large.py: 4096 x 393216 fp32, T = 6 GiB a tensor): what
# load reports of it on an H100, and what each part of its peak is.
T = 6 * GIB
SOFTMAX_LARGE = {"slot_bytes": 3 * T,  # the input and two output sets (whole 2 MiB pages already)
                 "staged_bytes": T,  # one call's pristine input
                 "check_workspace_bytes": 4 * T,  # the float64 cast of the input and the float64 reference output
                 "staging_bytes": 3 * T + T // 4,  # a signed set: the input drawn, its int8 bits, the signs, the result
                 "audit_copies_bytes": 3 * T}  # three private copies of the output
FLUSH, RUNNER = memory.FLUSH_BYTES, memory.RUNNER_RESERVE_BYTES


def test_the_sum_is_what_a_session_holds_at_its_peak():
    """Every part counted, once: held from start to end (the slot, the flush buffer, the private copies where
    they are), the runner's context, and the larger of a check (the staged input beside the float64 reference's
    cast input and output) and a staging. A timed call's own PyTorch output and the previous call's staged input
    are no part of it: they are released before the reference runs and before the next call is staged
    (test_the_float64_reference_runs_with_only_the_checked_calls_staged_values_beside_it, below)."""
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")
    held = 3 * T + FLUSH + RUNNER
    assert memory.transient_bytes(SOFTMAX_LARGE) == T + 4 * T  # the check: 30 GiB (the staging's 19.5 is less)
    assert memory.session_bytes(SOFTMAX_LARGE, cuda) == held + 5 * T + 3 * T  # 67.25 GiB, copies on the device
    assert memory.session_bytes(SOFTMAX_LARGE, cuda, "host") == held + 5 * T + T  # a full audit's output back
    assert memory.session_bytes(SOFTMAX_LARGE, cuda, "none") == held + 5 * T
    assert memory.session_bytes(SOFTMAX_LARGE, cpu, "none") == 3 * T + 5 * T  # no runner context, no flush
    # Where staging a call allocates more than a check (a large input reduced to a small output, or a reference
    # in the problem's own precision), the staging is the peak.
    staging_heavy = dict(SOFTMAX_LARGE, check_workspace_bytes=T // 2)
    assert memory.transient_bytes(staging_heavy) == 3 * T + T // 4
    assert memory.session_bytes(staging_heavy, cuda, "none") == held + 3 * T + T // 4
    # Before load measured the staging (an older answer): the staged set itself at least.
    older = {k: v for k, v in SOFTMAX_LARGE.items() if k != "staging_bytes"}
    assert memory.transient_bytes(dict(older, check_workspace_bytes=0)) == T
    with pytest.raises(ValueError):
        memory.session_bytes(SOFTMAX_LARGE, cuda, "nowhere")


def test_the_copies_go_to_the_host_exactly_when_the_device_cannot_hold_them(monkeypatch):
    """The softmax's session with its copies: 67.25 GiB, which an 80 GB H100 (79.2 GiB, 78.7 free beside the
    worker's context) holds now. Before, the estimate was 67 GiB while the session's peak was 73.25 (the timed
    call's native output and the flush buffer were not counted), so the copies stayed on the device and the
    float64 reference ran out of memory."""
    monkeypatch.setattr(memory, "host_memory_available", lambda: 100 * GIB)
    cuda = torch.device("cuda", 0)
    with_copies = memory.session_bytes(SOFTMAX_LARGE, cuda)
    assert with_copies == 67 * GIB + GIB // 4
    for free, where in ((78 * GIB + 700 * (1 << 20), "device"), (with_copies, "device"), (with_copies - 1, "host"),
                        (memory.session_bytes(SOFTMAX_LARGE, cuda, "host"), "host")):
        monkeypatch.setattr(memory, "device_memory", lambda device, free=free: (free, 79 * GIB + GIB // 5))
        assert memory.place_audit_copies("p.py", SOFTMAX_LARGE, cuda) == where, free
    monkeypatch.setattr(memory, "device_memory",
                        lambda device: (memory.session_bytes(SOFTMAX_LARGE, cuda, "host") - 1, 79 * GIB + GIB // 5))
    with pytest.raises(memory.GpuMemoryBusy):  # not even so: the rest of an 80 GB GPU is held by others
        memory.place_audit_copies("p.py", SOFTMAX_LARGE, cuda)


def test_the_workspace_cap_leaves_room_for_the_sessions_peak(monkeypatch):
    estimate = dict(SOFTMAX_LARGE, workspace_cap_bytes=4 * GIB)
    monkeypatch.setattr(memory, "device_memory", lambda device: (32 * GIB, 80 * GIB))  # slot and copies allocated
    cuda = torch.device("cuda", 0)
    assert memory.workspace_cap(estimate, cuda, slot_allocated=True)[0] == 2 * GIB  # 32 - the check's 30
    assert memory.workspace_cap(estimate, cuda, slot_allocated=True, copies="host")[0] == 0  # and an output set
    heavy = dict(estimate, check_workspace_bytes=0, staging_bytes=31 * GIB)
    assert memory.workspace_cap(heavy, cuda, slot_allocated=True)[0] == 1 * GIB  # 32 - the staging's 31


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


# ---- what a session keeps alive at its peaks (candidate_session.py) -------------------------------------------
class Lifetimes:
    """Weak references to a session's large per-call tensors -- PyTorch's own outputs (`native`), the float64
    reference's (`compute`), each staged set (Slot.stage, Slot.regenerate) -- and how many are alive at the
    moments its memory peaks: when the worker runs the reference, and when it stages a set. What the fake runner
    computes inside a call (with the reference too) is the kernel's, not the worker's, and is not counted."""

    def __init__(self, monkeypatch, worker):
        import weakref
        from cutegen_worker import staging
        from fake_runner import FakeRunner
        problem = worker.session.problem
        own = [id(p) for p in problem.params]  # a set with the problem's own parameters shares them: never freed
        self.natives, self.refs, self.staged = [], [], []
        self.at_reference, self.at_staging = [], []  # (natives, refs, staged sets alive) / staged sets alive
        inside = []
        track = lambda into, tensors: into.extend(weakref.ref(t) for t in tensors
                                                  if isinstance(t, torch.Tensor) and id(t) not in own)
        real_call = FakeRunner.call

        def call(runner, *a, **k):
            inside.append(True)
            try:
                return real_call(runner, *a, **k)
            finally:
                inside.pop()

        reference = problem.reference
        real_native, real_compute = reference.native, reference.compute

        def native(*a, **k):
            out = real_native(*a, **k)
            if not inside:
                track(self.natives, out)
            return out

        def compute(*a, **k):
            if not inside:
                self.at_reference.append(self.alive())
            out = real_compute(*a, **k)
            if not inside:
                track(self.refs, out)
            return out

        def staging_of(real):
            def make(slot, *a, **k):
                self.at_staging.append(self.alive()[2])
                staged = real(slot, *a, **k)
                track(self.staged, list(staged.inputs) + list(staged.params))
                return staged
            return make

        monkeypatch.setattr(FakeRunner, "call", call)
        monkeypatch.setattr(reference, "native", native)
        monkeypatch.setattr(reference, "compute", compute)
        monkeypatch.setattr(staging.Slot, "stage", staging_of(staging.Slot.stage))
        monkeypatch.setattr(staging.Slot, "regenerate", staging_of(staging.Slot.regenerate))

    def alive(self) -> tuple:
        return tuple(sum(r() is not None for r in refs) for refs in (self.natives, self.refs, self.staged))


def evaluate_tracked(worker, monkeypatch, name, trials, runs=6, **fake):
    from conftest import problem_path
    worker.load(problem_path(name))
    lifetimes = Lifetimes(monkeypatch, worker)
    result = worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                         trials=trials, warmup=1, runs=runs, precision="strict", call_timeout_s=10.0,
                         work_dir="/tmp/cutegen-test-work", fake_runner=dict(fake, mode=fake.get("mode", "reference")))
    return result, lifetimes


@pytest.mark.parametrize("path", ["exact", "screen_failed"])
def test_the_float64_reference_runs_with_only_the_checked_calls_staged_values_beside_it(worker, small, monkeypatch,
                                                                                       path):
    """KernelBench's softmax on an 80 GB H100 ran out of memory in a timed call's float64 reference: PyTorch's own
    6 GiB output, which the call had just been screened or compared with, was still held beside the reference's
    12 GiB cast input and 12 GiB output. Now only what the comparisons need of it (values at the secret positions,
    scale, norm) is kept, so whenever the worker runs the reference -- a timed call's exact check, with or without
    a failed screen before it, a trial's or a full audit's check -- no native output, no earlier reference output
    and no set but the one checked is alive."""
    from test_every_call_checked import EXACT_PLAN, SCREEN_TRIALS
    if path == "screen_failed":  # every timed call screened, none settled by it: the exact check after the screen
        monkeypatch.setattr(candidate_session.CandidateSession, "_within", lambda self, *a: False)
    trials = EXACT_PLAN if path == "exact" else SCREEN_TRIALS  # no trial of a timed kind: no screen at all
    result, lifetimes = evaluate_tracked(worker, monkeypatch, "softmax_rows", trials)
    assert result["verdict"] == "pass", result["reason"]
    assert result["audits"]["sampled"] == 6 and "screened" not in result["audits"]
    assert len(lifetimes.at_reference) == len(trials) + 6 + 2  # the trials, every timed call, the two full audits
    assert set(lifetimes.at_reference) == {(0, 0, 1)}, lifetimes.at_reference


def test_a_calls_staged_values_are_released_before_the_next_calls_are_made(worker, small, monkeypatch):
    """Staging the next call while the last one's pristine input was still referenced held two sets side by side
    (6 GiB more on KernelBench's softmax); now every staging -- calibration, trial, warm-up, timed, a full audit's
    regenerated set -- finds none of the earlier ones alive."""
    from test_every_call_checked import SCREEN_TRIALS
    result, lifetimes = evaluate_tracked(worker, monkeypatch, "relu", SCREEN_TRIALS)
    assert result["verdict"] == "pass", result["reason"]
    stagings = candidate_session.CALIBRATION_ROUNDS + len(SCREEN_TRIALS) + 1 + 6 + 2
    assert lifetimes.at_staging == [0] * stagings
    assert lifetimes.alive() == (0, 0, 0)  # nothing of any call outlives the session


@pytest.mark.parametrize("where", ["trial", "timed"])
def test_a_failed_calls_diagnosis_runs_without_the_failed_calls_values(worker, small, monkeypatch, where):
    """A failed check asks whether the output is the previous call's answer (result_reuse), making that call's
    set and reference again: the failed call's own set and reference are released first, so the diagnosis needs
    no more memory than a check."""
    from test_every_call_checked import ONE_TRIAL
    trials = ONE_TRIAL + [{"seed": 2, "kind": "problem", "params": "own"}]
    # "stale" answers each call with the one before: wrong from the second trial on, or from the second timed
    # call on when honest before the first timed call (the trials' two runs each and the warm-up).
    after = 0 if where == "trial" else 2 * len(trials) + 1
    result, lifetimes = evaluate_tracked(worker, monkeypatch, "relu", trials, mode="stale", after=after)
    assert result["verdict"] == "result_reuse", result["reason"]
    assert result["reason"].startswith("trial 1" if where == "trial" else "timed call 1"), result["reason"]
    assert set(lifetimes.at_reference) == {(0, 0, 1)}, lifetimes.at_reference
    assert set(lifetimes.at_staging) == {0}, lifetimes.at_staging


def test_a_sampled_comparison_of_values_taken_first_is_the_same_report():
    """The timed calls keep only PyTorch's values at the secret positions: compared from them, the report is the
    one compared from the whole tensor, bit for bit."""
    from cutegen_worker import audit, compare
    torch.manual_seed(3)
    full = torch.softmax(torch.randn(64, 1000, dtype=torch.float64) * 30, dim=-1)
    positions = torch.sort(torch.randperm(full.numel())[:2048]).values
    got = (full.reshape(-1)[positions] * (1 + 1e-7 * torch.randn(2048, dtype=torch.float64))).to(torch.float32)
    tol = compare.Tolerance(1e-4, 1e-4, 1e-6, 1e-9)
    scale, norm = compare.finite_magnitude(full)
    whole = audit.compare_samples(got, full, positions, tol, scale, ref_sq_sum=norm)
    taken = audit.compare_sampled(got, audit.sample(full, positions), full.numel(), tol, scale, ref_sq_sum=norm)
    assert taken == whole and whole["total"] == 2048


def test_the_memory_trace_is_off_unless_asked_and_gives_the_estimate_in_gib(monkeypatch, capsys):
    """CUTEGEN_MEMORY_TRACE=1 writes the load's estimate and, on a GPU, one line per judge step to stderr;
    without it, nothing (the worker's log is read on failures, and a user never asked for these lines)."""
    from cutegen_worker import memtrace
    estimate = {"slot_bytes": 18 * GIB, "staged_bytes": 6 * GIB, "note": "not a size"}
    monkeypatch.delenv(memtrace.ENV, raising=False)
    memtrace.note_estimate(estimate)
    memtrace.note("a step")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(memtrace.ENV, "1")
    memtrace.note_estimate(estimate)
    assert capsys.readouterr().err == "memtrace estimate: slot_bytes 18.00, staged_bytes 6.00\n"


def test_every_phase_change_is_a_trace_point(monkeypatch):
    """The session's step is a property: each change is where the trace notes the step before it."""
    from cutegen_worker import memtrace
    seen = []
    monkeypatch.setattr(memtrace, "note", seen.append)
    session = candidate_session.CandidateSession.__new__(candidate_session.CandidateSession)
    session.phase = "trial 0 (problem inputs)"
    session.phase = "timed call 0"
    assert seen == ["end of starting the runner", "end of trial 0 (problem inputs)"]
    assert session.phase == "timed call 0"


@pytest.mark.parametrize("conf, expected", [
    ("", "expandable_segments:True"),
    ("max_split_size_mb:128", "max_split_size_mb:128,expandable_segments:True"),
    ("expandable_segments:False", "expandable_segments:False"),
    ("garbage_collection_threshold:0.6, expandable_segments:True", "garbage_collection_threshold:0.6, expandable_segments:True"),
])
def test_the_worker_turns_expandable_segments_on_unless_the_user_chose(conf, expected):
    """A long-lived tensor carved from a freed larger block leaves a hole no larger request can use: with
    expandable segments freed memory serves any size. A user's own choice either way stands."""
    from cutegen_worker import allocator
    assert allocator.with_expandable_segments(conf) == expected


def test_the_worker_process_runs_with_expandable_segments(tmp_path):
    """`python -m cutegen_worker` sets it before torch is imported: the allocator reads it once."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "PYTORCH_CUDA_ALLOC_CONF"}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    probe = ("import os, sys; import cutegen_worker.__main__; print(os.environ['PYTORCH_CUDA_ALLOC_CONF']); "
             "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["expandable_segments:True", "False"]
