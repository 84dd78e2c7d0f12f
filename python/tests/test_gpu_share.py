"""Another program's work on the judge's GPU must not become a verdict or a number (gpu_share.py), and the
driver is asked about the right GPU (gpu_probe.py). No GPU here: the probe is a fake that reports what a
test asks for -- processes, utilisation samples on a period grid, per-process samples -- on a fake clock."""
import ctypes
import os

import pytest
import torch

from conftest import FAKE_RUNNER_TRIALS, WorkerError, problem_path
from cutegen_worker import errors, gpu_probe, gpu_share, nvml_ctypes
from cutegen_worker.gpu_probe import Device, Identity, ProbeError

ME = os.getpid()
PERIOD = 166_000  # 1/6 s, NVML's shortest sample period
T0 = 1_800_000_000_000_000  # a wall-clock time in microseconds


class FakeClock:
    def __init__(self, now=T0):
        self.now = now
        self.slept = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept += seconds
        self.now += int(seconds * 1e6)


class FakeProbe:
    """`listed`: [(pid, bytes)]; `busy(ts)`: the utilisation of the sample period ending at ts (None: no
    timestamped samples, as nvidia-smi); `loop`: [(pid, microseconds after `since`, sm percent)] (None: no
    per-process samples)."""
    source = "fake"

    def __init__(self, clock, listed=((ME, 2 << 30),), busy=lambda ts: 0, loop=(), period=PERIOD, stamp_offset=0):
        self.clock, self.busy, self.loop, self.period = clock, busy, loop, period
        self.listed = listed if isinstance(listed, Exception) else list(listed)
        self.stamp_offset = stamp_offset

    def processes(self):
        if isinstance(self.listed, Exception):
            raise self.listed
        return self.listed

    def utilization_samples(self, since_us):
        if self.busy is None:
            return None
        last = (self.clock() // self.period) * self.period
        grid = [last - k * self.period for k in range(40)][::-1]
        return [(ts + self.stamp_offset, self.busy(ts)) for ts in grid if ts + self.stamp_offset > since_us]

    def process_utilization(self, since_us):
        if self.loop is None:
            return None
        return [(pid, since_us + offset, sm) for pid, offset, sm in self.loop]


def share_check(probe, clock, **kw):
    return gpu_share.ShareCheck(probe, clock=clock, sleep=clock.sleep, own_pid=ME,
                                name_of=lambda pid: {1234: "python"}.get(pid, "worker"),
                                descends=kw.pop("descends", lambda pid, ancestor: False), **kw)


# ---- the policy ---------------------------------------------------------------------------------------------
def test_work_while_the_judge_is_idle_is_another_user_named_with_its_process():
    clock = FakeClock()
    probe = FakeProbe(clock, listed=[(ME, 2 << 30), (1234, int(20.1 * (1 << 30)))], busy=lambda ts: 97)
    check = share_check(probe, clock)
    with pytest.raises(gpu_share.GpuBusy) as busy:
        check.check("checked before the kernel was loaded", [4321])
    assert busy.value.kind == errors.BUSY  # cutegen's machine_busy: measured again, then reported, never a verdict
    assert str(busy.value).startswith("the GPU was too busy to time on: process 1234 (python) holds 20.1 GiB and "
                                      "the GPU was 97% busy while the judge was idle (checked before the kernel "
                                      "was loaded)"), str(busy.value)
    assert clock.slept < 0.6  # a sample period or two, not seconds


def test_a_process_that_only_holds_a_context_refuses_nothing():
    # An idle sibling worker of cutegen bench, or a notebook: named in the record, no slower kernel.
    clock = FakeClock()
    check = share_check(FakeProbe(clock, listed=[(ME, 2 << 30), (4321, 1 << 29), (1234, 1 << 30)]), clock)
    check.check("checked before the kernel was loaded", [4321])
    record = check.record()
    assert record["status"] == "checked" and record["note"] == ""
    assert [o["pid"] for o in record["checks"][0]["others"]] == [1234]  # the runner (4321) is the judge's
    assert record["checks"][0]["idle_busy_percent"] == 0


def test_only_samples_wholly_inside_the_idle_window_count():
    # The judge's own work fills the GPU until the window opens; a sample whose period began before it
    # reads that work and must not be taken for another user.
    clock = FakeClock(T0 + PERIOD // 2)
    start = clock()
    probe = FakeProbe(clock, busy=lambda ts: 100 if ts - PERIOD < start else 0)
    check = share_check(probe, clock)
    check.check("checked after the timed calls", [])
    assert check.record()["checks"][0]["idle_busy_percent"] == 0
    assert clock() - start >= 1.1 * PERIOD  # waited for a whole period after the window opened


def test_a_process_that_worked_during_the_timed_calls_is_another_user():
    clock = FakeClock()
    probe = FakeProbe(clock, listed=[(ME, 1 << 30), (1234, 3 << 30)],
                      loop=[(1234, -5_000_000, 100), (1234, 200_000, 85), (4321, 100_000, 99), (777, 100_000, 60),
                            (888, 300_000, 0)])
    check = share_check(probe, clock, descends=lambda pid, ancestor: pid == 777 and ancestor == ME)
    with pytest.raises(gpu_share.GpuBusy) as busy:
        check.check("checked after the timed calls, the runner gone", [4321], since_us=T0 - 1_000_000)
    message = str(busy.value)
    # 100% before the timed calls began does not count; the runner (4321) and the worker's child (777) are
    # the judge's; a sample at 0% names nobody.
    assert "process 1234 (python) holds 3.0 GiB and used up to 85% of the GPU during the timed calls" in message
    assert "4321" not in message and "777" not in message and "888" not in message
    assert clock.slept == 0  # no idle window once the timed calls already showed a user


def test_a_screening_waits_out_no_idle_window_but_still_reads_the_processes():
    # A screening only ranks (the candidate chosen is judged in full, idle window and all): the window's sample
    # period or two (0.3-0.4 s a check on an H100) is not spent, and the record says the check was partial.
    clock = FakeClock()
    probe = FakeProbe(clock, listed=[(ME, 1 << 30), (1234, 3 << 30)], busy=lambda ts: 97, loop=[(1234, 200_000, 85)])
    check = share_check(probe, clock, idle_window=False)
    check.check("checked before the kernel was loaded", [])
    assert clock.slept == 0
    with pytest.raises(gpu_share.GpuBusy, match="used up to 85% of the GPU during the timed calls"):
        check.check("checked after the timed calls, the runner gone", [], since_us=T0 - 1_000_000)
    record = check.record()
    assert record["status"] == "partial" and "a screening waits out no idle window" in record["note"]
    assert [c["idle_busy_percent"] for c in record["checks"]] == [None, None]


def test_a_gpu_busy_where_no_process_can_be_seen_is_another_user_and_says_why():
    clock = FakeClock()
    for listed, why in (([], "lists no process at all"), ([(98765, 1 << 30)], "another PID namespace's")):
        check = share_check(FakeProbe(clock, listed=listed, busy=lambda ts: 60), clock)
        with pytest.raises(gpu_share.GpuBusy) as busy:
            check.check("checked before the kernel was loaded", [])
        assert "the GPU was 60% busy while the judge was idle" in str(busy.value) and why in str(busy.value)
        assert "98765" not in str(busy.value)  # not this namespace's number: naming it would mislead


def test_in_a_container_the_idle_gpu_still_passes_and_the_lost_part_is_noted():
    clock = FakeClock()
    check = share_check(FakeProbe(clock, listed=[(98765, 1 << 30), (98766, 1 << 30)], loop=[(98766, 10, 99)]),
                        clock)
    check.check("checked after the timed calls", [], since_us=T0 - 1)
    record = check.record()
    assert record["status"] == "checked" and "PID namespaces" in record["note"]
    assert record["checks"][0]["pid_view"] == "foreign" and record["checks"][0]["others"] == []


@pytest.mark.parametrize("probe_kw, note", [
    (dict(busy=None), "no timestamped utilisation samples"),                 # nvidia-smi
    (dict(period=1_000_000), "sample period is 1000 ms"),                   # a product's one-second period
    (dict(stamp_offset=-3_600_000_000), "not stamped with this machine's wall clock"),
])
def test_utilisation_that_cannot_be_sampled_is_noted_and_refuses_nothing(probe_kw, note):
    clock = FakeClock()
    probe = FakeProbe(clock, listed=[(ME, 1 << 30), (1234, 1 << 30)], **probe_kw)
    check = share_check(probe, clock)
    check.check("checked before the kernel was loaded", [])
    record = check.record()
    assert record["status"] == "partial" and note in record["note"], record
    assert record["checks"][0]["idle_busy_percent"] is None
    assert clock.slept < 0.6


def test_no_sample_in_the_window_ends_the_wait():
    class Silent(FakeProbe):
        def utilization_samples(self, since_us):
            return [] if since_us else super().utilization_samples(since_us)  # history, then nothing new
    clock = FakeClock()
    check = share_check(Silent(clock), clock)
    check.check("checked before the kernel was loaded", [])
    assert check.record()["status"] == "partial" and "no utilisation sample fell" in check.record()["note"]
    assert clock.slept < 0.6


def test_a_failing_process_list_is_noted_and_utilisation_still_decides():
    clock = FakeClock()
    check = share_check(FakeProbe(clock, listed=ProbeError("NVML could not give the processes: boom"),
                                  busy=lambda ts: 50), clock)
    with pytest.raises(gpu_share.GpuBusy):
        check.check("checked before the kernel was loaded", [])
    assert "boom" in check.record()["note"]


def test_no_route_to_the_driver_is_recorded_not_refused():
    check = gpu_share.ShareCheck(None, unavailable="NVML: cannot load the NVML library; nvidia-smi is not installed")
    check.check("checked before the kernel was loaded", [])
    assert check.record() == {"status": "unavailable", "source": None, "checks": [],
                              "note": "NVML: cannot load the NVML library; nvidia-smi is not installed"}


def test_the_switch(monkeypatch):
    assert gpu_share.for_device(torch.device("cpu")) is None  # no GPU: nothing to share, nothing recorded
    monkeypatch.setenv(gpu_share.SWITCH, "off")
    off = gpu_share.for_device(torch.device("cuda", 0))
    assert off.record()["status"] == "off"
    monkeypatch.setenv(gpu_share.SWITCH, "maybe")
    with pytest.raises(errors.RequestError, match="CUTEGEN_GPU_SHARE_CHECK"):
        gpu_share.for_device(torch.device("cuda", 0))


def test_descendants_are_found_through_parents():
    parents = {50: 40, 40: 30, 30: 1, 60: 1}
    assert gpu_share.descends_from(50, 30, parent=parents.get)
    assert not gpu_share.descends_from(60, 30, parent=parents.get)
    assert not gpu_share.descends_from(30, 30, parent=parents.get)
    assert gpu_share.descends_from(os.getpid(), os.getppid())  # the real /proc
    assert gpu_share.parent_pid(os.getpid()) == os.getppid()


# ---- which GPU is the judge's ---------------------------------------------------------------------------
NVML_DEVICES = [Device(0, "GPU-aaaa1111-0000-0000-0000-000000000000", "00000000:18:00.0"),
                Device(1, "GPU-bbbb2222-0000-0000-0000-000000000000", "00000000:2A:00.0"),
                Device(2, "GPU-cccc3333-0000-0000-0000-000000000000", "00000001:9B:00.0")]


def test_the_judges_gpu_is_found_by_uuid_whatever_torch_numbers_it():
    # CUDA_VISIBLE_DEVICES=2 (or fastest-first ordering): torch's device 0 is NVML's 2.
    judge = Identity(uuid="CCCC3333-0000-0000-0000-000000000000", pci=(0, 0x18, 0))
    assert gpu_probe.find_device(judge, NVML_DEVICES).index == 2  # the UUID wins over a stale PCI address


def test_without_a_uuid_the_pci_address_decides():
    assert gpu_probe.find_device(Identity(pci=(1, 0x9B, 0)), NVML_DEVICES).index == 2
    assert gpu_probe.find_device(Identity(pci=(0, 0x2A, 0)), NVML_DEVICES).index == 1
    with pytest.raises(ProbeError, match="PCI address"):
        gpu_probe.find_device(Identity(pci=(0, 0x3B, 0)), NVML_DEVICES)


def test_a_gpu_the_driver_does_not_list_cannot_be_checked():
    with pytest.raises(ProbeError, match="MIG instance"):  # a MIG instance's UUID is no whole GPU's
        gpu_probe.find_device(Identity(uuid="dddd4444-0000-0000-0000-000000000000", pci=(0, 0x18, 0)), NVML_DEVICES)
    with pytest.raises(ProbeError, match="neither a UUID nor a PCI address"):
        gpu_probe.find_device(Identity(), NVML_DEVICES)


def test_bus_ids():
    assert gpu_probe.parse_bus_id("00000000:19:00.0") == (0, 0x19, 0)
    assert gpu_probe.parse_bus_id("0000:C1:01.0") == (0, 0xC1, 1)
    assert gpu_probe.parse_bus_id("[N/A]") is None


# ---- nvidia-smi ---------------------------------------------------------------------------------------------
def test_nvidia_smi_is_asked_about_the_judges_gpu_by_its_own_index():
    asked = []

    def run(args):
        asked.append(args)
        if args[0].startswith("--query-gpu"):
            return "0, GPU-aaaa1111-0000-0000-0000-000000000000, 00000000:18:00.0\n" \
                   "1, GPU-bbbb2222-0000-0000-0000-000000000000, 00000000:2A:00.0\n"
        return "1234, 20580\n4321, [N/A]\n"
    probe = gpu_probe.open_smi(Identity(uuid="bbbb2222-0000-0000-0000-000000000000"), run)
    assert probe.processes() == [(1234, 20580 << 20), (4321, None)]
    assert asked[-1][-2:] == ["-i", "1"]
    assert probe.utilization_samples(0) is None and probe.process_utilization(0) is None


def test_nvidia_smi_output_it_cannot_read_is_an_error_not_an_empty_list():
    assert gpu_probe.parse_smi_processes("") == []
    assert gpu_probe.parse_smi_processes("No running processes found\n") == []
    with pytest.raises(ProbeError, match="unexpected nvidia-smi line"):
        gpu_probe.parse_smi_processes("pid, used_gpu_memory [MiB]\n")
    with pytest.raises(ProbeError):
        gpu_probe.parse_smi_devices("GPU 0: NVIDIA H200\n")


# ---- NVML ---------------------------------------------------------------------------------------------------
def test_the_ctypes_structures_have_nvml_h_sizes():
    assert ctypes.sizeof(nvml_ctypes.ProcessInfo) == 24
    assert ctypes.sizeof(nvml_ctypes.Sample) == 16
    assert ctypes.sizeof(nvml_ctypes.ProcessUtilizationSample) == 32
    assert ctypes.sizeof(nvml_ctypes.PciInfo) == 68


def test_a_missing_nvml_library_is_an_nvml_error():
    with pytest.raises(nvml_ctypes.NVMLError, match="cannot load the NVML library"):
        nvml_ctypes.Nvml("libnvidia-ml-not-here.so.1")


class FakeNvml:
    """pynvml's shape: NVMLError with .value, the functions gpu_probe calls."""
    NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NOT_FOUND, NVML_GPU_UTILIZATION_SAMPLES = 3, 6, 1

    class NVMLError(Exception):
        def __init__(self, value):
            super().__init__(f"NVML error {value}")
            self.value = value

    class Obj:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    def __init__(self, samples_error=None):
        self.samples_error = samples_error

    def nvmlInit(self):
        pass

    def nvmlDeviceGetCount(self):
        return len(NVML_DEVICES)

    def nvmlDeviceGetHandleByIndex(self, i):
        return f"handle-{i}"

    def nvmlDeviceGetUUID(self, handle):
        return NVML_DEVICES[int(handle[-1])].uuid.encode()  # old pynvml answers bytes

    def nvmlDeviceGetPciInfo(self, handle):
        return self.Obj(busId=NVML_DEVICES[int(handle[-1])].bus_id.encode())

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        return [self.Obj(pid=1234, usedGpuMemory=5 << 30), self.Obj(pid=99, usedGpuMemory=None)]

    def nvmlDeviceGetSamples(self, handle, kind, since):
        if self.samples_error is not None:
            raise self.NVMLError(self.samples_error)
        return 1, [self.Obj(timeStamp=since + 10, sampleValue=self.Obj(uiVal=42))]

    def nvmlDeviceGetProcessUtilization(self, handle, since):
        raise self.NVMLError(self.NVML_ERROR_NOT_SUPPORTED)


def test_nvml_is_opened_on_the_judges_gpu_and_read(monkeypatch):
    monkeypatch.setattr(gpu_probe, "_nvml_module", lambda: (FakeNvml(), "fake nvml"))
    probe = gpu_probe.open_nvml(Identity(uuid="bbbb2222-0000-0000-0000-000000000000"))
    assert probe.handle == "handle-1" and probe.source == "fake nvml"
    assert probe.processes() == [(1234, 5 << 30), (99, None)]
    assert probe.utilization_samples(100) == [(110, 42)]
    assert probe.process_utilization(0) is None  # not supported: no answer, not an empty one


@pytest.mark.parametrize("code, expected", [(6, []), (3, None)])
def test_nvml_no_samples_and_not_supported_are_answers(code, expected):
    probe = gpu_probe.NvmlProbe(FakeNvml(samples_error=code), "handle-0", NVML_DEVICES[0], "fake")
    assert probe.utilization_samples(0) == expected


def test_any_other_nvml_failure_is_a_probe_error():
    probe = gpu_probe.NvmlProbe(FakeNvml(samples_error=999), "handle-0", NVML_DEVICES[0], "fake")
    with pytest.raises(ProbeError, match="utilisation samples"):
        probe.utilization_samples(0)


def test_with_no_route_open_the_reasons_of_each_are_kept(monkeypatch):
    monkeypatch.setattr(gpu_probe, "_opened", {})
    monkeypatch.setattr(gpu_probe, "torch_identity", lambda index: Identity(uuid="x"))

    def closed(why):
        def opener(judge):
            raise ProbeError(why)
        return opener
    monkeypatch.setattr(gpu_probe, "open_nvml", closed("NVML: no library"))
    monkeypatch.setattr(gpu_probe, "open_smi", closed("nvidia-smi is not installed"))
    assert gpu_probe.open_probe(0) == (None, "NVML: no library; nvidia-smi is not installed")


# ---- the candidate session ----------------------------------------------------------------------------------
class Scripted:
    """ShareCheck factories for the session: the probe's idle utilisation per check, in order."""

    def __init__(self, idle, loop=(), listed=((ME, 1 << 30),)):
        self.idle, self.loop, self.listed, self.checks = list(idle), loop, listed, []

    def __call__(self, device, idle_window=True):
        clock = FakeClock(gpu_share.now_us())
        scripted = self

        class Probe(FakeProbe):
            def utilization_samples(self, since_us):
                level = scripted.idle[min(len(check.checks), len(scripted.idle) - 1)]
                self.busy = lambda ts: level
                return super().utilization_samples(since_us)
        check = share_check(Probe(clock, listed=self.listed, loop=self.loop), clock, idle_window=idle_window)
        self.checks.append(check)
        return check


def evaluate(worker, monkeypatch, scripted, mode="reference", request=None, **fake):
    monkeypatch.setattr(gpu_share, "for_device", scripted)
    worker.load(problem_path("relu"))
    return worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                       trials=FAKE_RUNNER_TRIALS, warmup=2, runs=8, precision="strict", call_timeout_s=10.0,
                       work_dir="/tmp/cutegen-test-work", fake_runner=dict(mode=mode, **fake), **(request or {}))


def test_a_screened_session_asks_for_checks_without_the_idle_window(worker, small, monkeypatch):
    scripted = Scripted(idle=[97])  # a busy idle GPU that only an idle window would see
    record = evaluate(worker, monkeypatch, scripted, request={"screening": True})
    assert record["verdict"] == "pass", record["reason"]
    assert [c.idle_window for c in scripted.checks] == [False]
    assert record["gpu_share"]["status"] == "partial" and "a screening" in record["gpu_share"]["note"]
    full = Scripted(idle=[0])
    assert evaluate(worker, monkeypatch, full)["gpu_share"]["status"] == "checked"
    assert [c.idle_window for c in full.checks] == [True]


def test_screening_must_be_a_boolean(worker, small, monkeypatch):
    with pytest.raises(WorkerError, match="screening must be true or false"):
        evaluate(worker, monkeypatch, Scripted(idle=[0]), request={"screening": 1})


def test_a_quiet_gpu_is_checked_before_and_after_and_recorded(worker, small, monkeypatch):
    result = evaluate(worker, monkeypatch, Scripted(idle=[0]))
    assert result["verdict"] == "pass", result["reason"]
    share = result["gpu_share"]
    assert share["status"] == "checked"
    assert [c["moment"] for c in share["checks"]] == ["checked before the kernel was loaded",
                                                      "checked after the timed calls, the runner gone"]


def test_a_busy_gpu_before_the_kernel_is_loaded_gives_no_verdict(worker, small, monkeypatch):
    with pytest.raises(WorkerError) as busy:
        evaluate(worker, monkeypatch, Scripted(idle=[97]))
    assert busy.value.kind == "busy"
    assert "the GPU was too busy to time on" in busy.value.message and "before the kernel" in busy.value.message


def test_hidden_work_beside_another_user_is_no_verdict(worker, small, monkeypatch):
    # The other program started during the timed calls: the wall clock saw far more than the events, as the
    # H200 showed for honest kernels; the check after the calls turns that into a busy machine.
    with pytest.raises(WorkerError) as busy:
        evaluate(worker, monkeypatch, Scripted(idle=[0, 0], loop=[(1234, 10, 90)],
                                               listed=[(ME, 1 << 30), (1234, 20 << 30)]), ms=4, event_ms=0.01)
    assert busy.value.kind == "busy"
    assert "process 1234 (python) holds 20.0 GiB and used up to 90% of the GPU during the timed calls" in \
        busy.value.message


def test_a_verdict_that_does_not_rest_on_times_stands(worker, small, monkeypatch):
    # Busy at the second check, which is never made: wrong outputs are wrong on any GPU.
    result = evaluate(worker, monkeypatch, Scripted(idle=[0, 97]), mode="zeros")
    assert result["verdict"] == "mismatch"
    assert len(result["gpu_share"]["checks"]) == 1


def test_a_screening_group_checks_once_before_the_loads_and_once_after_every_runner_is_gone(worker, small, monkeypatch):
    scripted = Scripted(idle=[0])
    monkeypatch.setattr(gpu_share, "for_device", scripted)
    worker.load(problem_path("relu"))
    answer = worker.call("screen_candidates", runner=["cutegen-runner"], libraries=["/a.so", "/b.so"],
                         trials=FAKE_RUNNER_TRIALS[:1], warmup=1, runs=6, precision="strict", call_timeout_s=10.0,
                         work_dir="/tmp/cutegen-test-work", fake_runners=[{"mode": "reference"}, {"mode": "native"}])
    (check,) = scripted.checks  # one for the group
    assert check.idle_window is False  # a screening
    assert [c["moment"] for c in check.checks] == ["checked before the kernels were loaded",
                                                   "checked after the timed calls, the runners gone"]
    records = answer["records"]
    assert [r["verdict"] for r in records] == ["pass", "pass"]
    assert records[0]["gpu_share"] == records[1]["gpu_share"] and records[0]["gpu_share"]["status"] == "partial"
