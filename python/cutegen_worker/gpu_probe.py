"""What the driver says about the judge's GPU: which processes have a context on it, and how busy it was
(gpu_share.py decides what that means). Three routes, the first that opens:

* NVML through pynvml (nvidia-ml-py) when it is importable;
* NVML through ctypes on the driver's libnvidia-ml.so.1 (nvml_ctypes.py), there wherever nvidia-smi is;
* `nvidia-smi`, which lists processes but gives no timestamped utilisation (see SmiProbe).

torch.cuda's helpers (utilization, list_gpu_processes) are no route of their own: they import pynvml, and
they map torch's index to NVML's through CUDA_VISIBLE_DEVICES alone, which is wrong when CUDA orders the
GPUs fastest-first (CUDA_DEVICE_ORDER's default) and NVML by PCI bus. Here the GPU is found by what both
sides report of it: its UUID, else its PCI address (find_device).

A probe answers processes() -> [(pid, bytes or None)], utilization_samples(since_us) -> [(timestamp_us,
percent)] or None when it cannot, process_utilization(since_us) -> [(pid, timestamp_us, sm_percent)] or
None; a failure is a ProbeError with the reason.
"""
import subprocess
from dataclasses import dataclass

import torch


class ProbeError(Exception):
    """The driver could not be asked; the message says why."""


@dataclass(frozen=True)
class Device:
    """A GPU as NVML (or nvidia-smi) lists it."""
    index: int
    uuid: str
    bus_id: str


@dataclass(frozen=True)
class Identity:
    """The judge's GPU as torch reports it: its UUID and PCI address (domain, bus, device), when known."""
    uuid: str = None
    pci: tuple = None


def torch_identity(index: int) -> Identity:
    props = torch.cuda.get_device_properties(index)
    uuid = getattr(props, "uuid", None)
    pci = tuple(getattr(props, f, None) for f in ("pci_domain_id", "pci_bus_id", "pci_device_id"))
    return Identity(uuid=str(uuid) if uuid else None, pci=pci if None not in pci else None)


def normal_uuid(text: str) -> str:
    """NVML writes "GPU-<hex>", torch the hex alone."""
    text = text.strip().lower()
    return text[4:] if text.startswith("gpu-") else text


def parse_bus_id(text: str):
    """(domain, bus, device) of "00000000:19:00.0" (NVML, nvidia-smi) or "0000:19:00.0"; None if unreadable."""
    try:
        domain, bus, rest = text.strip().split(":")
        return int(domain, 16), int(bus, 16), int(rest.split(".")[0], 16)
    except ValueError:
        return None


def find_device(judge: Identity, devices: list) -> Device:
    """The listed device that is the judge's GPU. By UUID when torch knows it: a UUID no whole GPU has is
    a MIG instance (or a GPU NVML cannot see), and its parent's numbers would be another instance's too.
    By PCI address only when torch gives no UUID."""
    if judge.uuid:
        found = [d for d in devices if normal_uuid(d.uuid) == normal_uuid(judge.uuid)]
        if found:
            return found[0]
        raise ProbeError(f"no GPU the driver lists has the judge's GPU's UUID {judge.uuid} "
                         f"(a MIG instance is not checked; {len(devices)} listed)")
    if judge.pci:
        found = [d for d in devices if parse_bus_id(d.bus_id) == judge.pci]
        if found:
            return found[0]
        raise ProbeError(f"no GPU the driver lists is at the judge's GPU's PCI address {judge.pci}")
    raise ProbeError("torch reports neither a UUID nor a PCI address for the judge's GPU")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlProbe:
    """NVML through `nvml`: the pynvml module or an nvml_ctypes.Nvml, which have the same functions."""

    def __init__(self, nvml, handle, device: Device, source: str):
        self.nvml, self.handle, self.device, self.source = nvml, handle, device, source

    def _ask(self, what: str, fn, *args):
        try:
            return fn(self.handle, *args)
        except self.nvml.NVMLError as exc:
            if getattr(exc, "value", None) == self.nvml.NVML_ERROR_NOT_FOUND:
                return []  # nothing since the timestamp given: no sample, not a failure
            if getattr(exc, "value", None) == self.nvml.NVML_ERROR_NOT_SUPPORTED:
                return None
            raise ProbeError(f"NVML could not give the {what}: {exc}") from None

    def processes(self) -> list:
        found = self._ask("processes", self.nvml.nvmlDeviceGetComputeRunningProcesses)
        if found is None:
            raise ProbeError("NVML does not list this GPU's processes")
        return [(int(p.pid), p.usedGpuMemory if isinstance(p.usedGpuMemory, int) and p.usedGpuMemory < 1 << 63
                 else None) for p in found]

    def utilization_samples(self, since_us: int):
        answer = self._ask("utilisation samples", self.nvml.nvmlDeviceGetSamples,
                           self.nvml.NVML_GPU_UTILIZATION_SAMPLES, since_us)
        if answer is None or answer == []:
            return answer
        return [(int(s.timeStamp), int(s.sampleValue.uiVal)) for s in answer[1]]

    def process_utilization(self, since_us: int):
        found = self._ask("per-process utilisation", self.nvml.nvmlDeviceGetProcessUtilization, since_us)
        if found is None:
            return None
        return [(int(s.pid), int(s.timeStamp), int(s.smUtil)) for s in found]


def _nvml_module():
    """(module, source): pynvml when importable, else the ctypes calls."""
    try:
        import pynvml
        return pynvml, "nvml (pynvml)"
    except ImportError:
        from . import nvml_ctypes
        return nvml_ctypes.Nvml(), "nvml (libnvidia-ml.so.1)"


def open_nvml(judge: Identity) -> NvmlProbe:
    try:
        nvml, source = _nvml_module()
        nvml.nvmlInit()
        devices, handles = [], {}
        for i in range(nvml.nvmlDeviceGetCount()):
            handles[i] = nvml.nvmlDeviceGetHandleByIndex(i)
            devices.append(Device(i, _text(nvml.nvmlDeviceGetUUID(handles[i])),
                                  _text(nvml.nvmlDeviceGetPciInfo(handles[i]).busId)))
    except Exception as exc:  # pynvml's and nvml_ctypes' NVMLError, a missing library: this route is closed
        raise ProbeError(f"NVML: {exc}") from None
    device = find_device(judge, devices)
    return NvmlProbe(nvml, handles[device.index], device, source)


def run_smi(args: list) -> str:
    try:
        done = subprocess.run(["nvidia-smi"] + args, capture_output=True, text=True, timeout=20)
    except FileNotFoundError:
        raise ProbeError("nvidia-smi is not installed") from None
    except subprocess.TimeoutExpired:
        raise ProbeError("nvidia-smi did not answer within 20 s") from None
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise ProbeError(f"nvidia-smi failed ({why[0] if why else f'exit status {done.returncode}'})")
    return done.stdout


def parse_smi_devices(text: str) -> list:
    """`--query-gpu=index,uuid,pci.bus_id --format=csv,noheader` lines."""
    devices = []
    for line in text.splitlines():
        if line.strip():
            fields = [f.strip() for f in line.split(",")]
            if len(fields) != 3 or not fields[0].isdigit():
                raise ProbeError(f"unexpected nvidia-smi line {line!r}")
            devices.append(Device(int(fields[0]), fields[1], fields[2]))
    return devices


def parse_smi_processes(text: str) -> list:
    """`--query-compute-apps=pid,used_memory --format=csv,noheader,nounits` lines: (pid, bytes or None)."""
    found = []
    for line in text.splitlines():
        if not line.strip() or line.strip().startswith("No running"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 2 or not fields[0].isdigit():
            raise ProbeError(f"unexpected nvidia-smi line {line!r}")
        found.append((int(fields[0]), int(fields[1]) << 20 if fields[1].isdigit() else None))  # MiB
    return found


class SmiProbe:
    """nvidia-smi: the processes only. Its utilisation (utilization.gpu) is one reading of the last sample
    period, which may be up to a second long (NVML's nvmlUtilization_t), without the period's time: no
    window short enough for the judge to wait can tell another program's work from the judge's own just
    before it, so it is not read (gpu_share.py records that utilisation went unsampled)."""
    source = "nvidia-smi"

    def __init__(self, device: Device, run=run_smi):
        self.device, self.run = device, run

    def processes(self) -> list:
        return parse_smi_processes(self.run(["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits",
                                             "-i", str(self.device.index)]))

    def utilization_samples(self, since_us: int):
        return None

    def process_utilization(self, since_us: int):
        return None


def open_smi(judge: Identity, run=run_smi) -> SmiProbe:
    devices = parse_smi_devices(run(["--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"]))
    return SmiProbe(find_device(judge, devices), run)


_opened = {}  # torch device index -> (probe or None, why not)


def open_probe(index: int):
    """(probe, None) through the first route that opens for torch's device `index`, else (None, why each
    route failed). Opened once per worker and device."""
    if index not in _opened:
        tried = []
        try:
            judge = torch_identity(index)
        except Exception as exc:  # torch without the properties: say so, as for any closed route
            _opened[index] = (None, f"torch could not describe GPU {index}: {exc}")
            return _opened[index]
        for opener in (open_nvml, open_smi):
            try:
                _opened[index] = (opener(judge), None)
                break
            except ProbeError as exc:
                tried.append(str(exc))
        else:
            _opened[index] = (None, "; ".join(tried))
    return _opened[index]
