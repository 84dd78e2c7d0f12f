"""The few NVML calls gpu_probe.py makes, through ctypes on the driver's own libnvidia-ml.so.1, shaped like
pynvml's functions of the same names (so gpu_probe.NvmlProbe takes either).

Why not only pynvml (nvidia-ml-py): it is a ctypes wrapper of this same library but a package of its own,
absent from most machines with torch; libnvidia-ml.so.1 ships with the driver, like libcuda.so.1
(cuda_driver.py), and is there wherever nvidia-smi works. The structures are those of NVIDIA's nvml.h
(and pynvml 12.x): nvmlDeviceGetComputeRunningProcesses_v3 fills nvmlProcessInfo_t, whose layout is
nvmlProcessInfo_v2_t's. test_gpu_share.py checks their sizes against the header's.
"""
import ctypes

NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_GPU_UTILIZATION_SAMPLES = 1
NVML_VALUE_NOT_AVAILABLE = (1 << 64) - 1  # usedGpuMemory when the driver cannot say (pynvml answers None)
_UUID_BYTES = 96  # NVML_DEVICE_UUID_V2_BUFFER_SIZE


class NVMLError(Exception):
    """An NVML call failed; `value` is its nvmlReturn_t, as pynvml's NVMLError has it."""

    def __init__(self, value: int, text: str):
        super().__init__(text)
        self.value = value


class ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t (= nvmlProcessInfo_v2_t)
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


class Value(ctypes.Union):  # nvmlValue_t
    _fields_ = [("dVal", ctypes.c_double), ("uiVal", ctypes.c_uint), ("ulVal", ctypes.c_ulong),
                ("ullVal", ctypes.c_ulonglong), ("sllVal", ctypes.c_longlong), ("siVal", ctypes.c_int),
                ("usVal", ctypes.c_ushort)]


class Sample(ctypes.Structure):  # nvmlSample_t: the timestamp is a CPU time in microseconds
    _fields_ = [("timeStamp", ctypes.c_ulonglong), ("sampleValue", Value)]


class ProcessUtilizationSample(ctypes.Structure):  # nvmlProcessUtilizationSample_t
    _fields_ = [("pid", ctypes.c_uint), ("timeStamp", ctypes.c_ulonglong), ("smUtil", ctypes.c_uint),
                ("memUtil", ctypes.c_uint), ("encUtil", ctypes.c_uint), ("decUtil", ctypes.c_uint)]


class PciInfo(ctypes.Structure):  # nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3)
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                ("device", ctypes.c_uint), ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                ("busId", ctypes.c_char * 32)]


class _Process:
    """What pynvml answers for a process: its pid and memory (None when the driver cannot say)."""

    def __init__(self, info: ProcessInfo):
        self.pid = info.pid
        self.usedGpuMemory = None if info.usedGpuMemory == NVML_VALUE_NOT_AVAILABLE else info.usedGpuMemory


class Nvml:
    NVMLError = NVMLError
    NVML_ERROR_NOT_SUPPORTED = NVML_ERROR_NOT_SUPPORTED
    NVML_ERROR_NOT_FOUND = NVML_ERROR_NOT_FOUND
    NVML_GPU_UTILIZATION_SAMPLES = NVML_GPU_UTILIZATION_SAMPLES

    def __init__(self, library: str = "libnvidia-ml.so.1"):
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as exc:
            raise NVMLError(-1, f"cannot load the NVML library {library}: {exc}") from None
        self._lib.nvmlErrorString.restype = ctypes.c_char_p
        self._lib.nvmlErrorString.argtypes = [ctypes.c_int]

    def _call(self, name: str, *args, ok=(NVML_SUCCESS,)) -> int:
        fn = getattr(self._lib, name, None)
        if fn is None:
            raise NVMLError(-1, f"this driver's NVML has no {name}")
        fn.restype = ctypes.c_int
        code = fn(*args)
        if code not in ok:
            text = self._lib.nvmlErrorString(code)
            raise NVMLError(code, f"{name}: {text.decode() if text else f'error {code}'}")
        return code

    def nvmlInit(self):
        self._call("nvmlInit_v2")

    def nvmlDeviceGetCount(self) -> int:
        count = ctypes.c_uint()
        self._call("nvmlDeviceGetCount_v2", ctypes.byref(count))
        return count.value

    def nvmlDeviceGetHandleByIndex(self, index: int):
        handle = ctypes.c_void_p()
        self._call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
        return handle

    def nvmlDeviceGetUUID(self, handle) -> str:
        buf = ctypes.create_string_buffer(_UUID_BYTES)
        self._call("nvmlDeviceGetUUID", handle, buf, ctypes.c_uint(_UUID_BYTES))
        return buf.value.decode()

    def nvmlDeviceGetPciInfo(self, handle) -> PciInfo:
        info = PciInfo()
        self._call("nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(info))
        return info

    def nvmlDeviceGetComputeRunningProcesses(self, handle) -> list:
        count = ctypes.c_uint(0)
        if self._call("nvmlDeviceGetComputeRunningProcesses_v3", handle, ctypes.byref(count), None,
                      ok=(NVML_SUCCESS, NVML_ERROR_INSUFFICIENT_SIZE)) == NVML_SUCCESS:
            return []
        count.value = count.value * 2 + 5  # processes may start between the two calls
        infos = (ProcessInfo * count.value)()
        self._call("nvmlDeviceGetComputeRunningProcesses_v3", handle, ctypes.byref(count), infos)
        return [_Process(infos[i]) for i in range(count.value)]

    def nvmlDeviceGetSamples(self, handle, sampling_type: int, last_seen_us: int):
        """(value type, samples newer than last_seen_us); NVMLError NOT_FOUND when there are none."""
        kind, count = ctypes.c_uint(), ctypes.c_uint(0)
        args = (handle, ctypes.c_uint(sampling_type), ctypes.c_ulonglong(last_seen_us), ctypes.byref(kind))
        self._call("nvmlDeviceGetSamples", *args, ctypes.byref(count), None)
        if count.value == 0:
            return kind.value, []
        samples = (Sample * count.value)()
        self._call("nvmlDeviceGetSamples", *args, ctypes.byref(count), samples)
        return kind.value, samples[:count.value]

    def nvmlDeviceGetProcessUtilization(self, handle, last_seen_us: int) -> list:
        count = ctypes.c_uint(0)
        stamp = ctypes.c_ulonglong(last_seen_us)
        if self._call("nvmlDeviceGetProcessUtilization", handle, None, ctypes.byref(count), stamp,
                      ok=(NVML_SUCCESS, NVML_ERROR_INSUFFICIENT_SIZE)) == NVML_SUCCESS:
            return []
        count.value = count.value * 2 + 5
        samples = (ProcessUtilizationSample * count.value)()
        self._call("nvmlDeviceGetProcessUtilization", handle, samples, ctypes.byref(count), stamp)
        return samples[:count.value]
