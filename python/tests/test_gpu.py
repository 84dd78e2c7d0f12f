"""The CUDA path: dedicated IPC allocations as another process (the runner) sees them, full-size
problems with the judge's default request, the CUDA clock, calibration. Skipped without a GPU;
scripts/gpu-check runs them on an H200 (`python3 -m pytest -m cuda python/tests`)."""
import base64
import json
import subprocess
import sys

import pytest
import torch

from conftest import problem_path
from cutegen_worker import cuda_driver
from cutegen_worker.shared_buffers import PAGE_BYTES

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

# Plays cutegen-runner: opens each IPC handle the way it does (once per handle, lazy peer access),
# reports what the mapping covers and how it starts, and copies buffers as told
# (an "identity kernel"). Driver API through ctypes, so it needs nothing but the driver.
RUNNER_STANDIN = r'''
import base64, ctypes, json, sys
lib = ctypes.CDLL("libcuda.so.1")
u64, size_t = ctypes.c_uint64, ctypes.c_size_t
class Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * 64)]
lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(u64), Handle, ctypes.c_uint]
lib.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(u64), ctypes.POINTER(size_t), u64]
lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, u64, size_t]
lib.cuMemcpyDtoD_v2.argtypes = [u64, u64, size_t]
def ok(code, what):
    if code != 0:
        raise SystemExit(f"{what} failed with CUresult {code}")
job = json.loads(sys.stdin.read())
ok(lib.cuInit(0), "cuInit")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
ok(lib.cuDeviceGet(ctypes.byref(dev), job["device"]), "cuDeviceGet")
ok(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
ok(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
opened, report = {}, []
for ref in job["refs"]:
    if ref["ipc_handle"] not in opened:
        h, p = Handle(), u64()
        h.reserved[:] = base64.b64decode(ref["ipc_handle"])
        ok(lib.cuIpcOpenMemHandle_v2(ctypes.byref(p), h, 1), "cuIpcOpenMemHandle")
        opened[ref["ipc_handle"]] = p.value
    p = opened[ref["ipc_handle"]] + ref["offset"]
    base, size = u64(), size_t()
    ok(lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), p), "cuMemGetAddressRange")
    head = (ctypes.c_ubyte * 16)()
    ok(lib.cuMemcpyDtoH_v2(head, p, 16), "cuMemcpyDtoH")
    report.append({"base_is_ptr": base.value == p, "size": size.value, "head": bytes(head).hex()})
for src, dst, nbytes in job["copies"]:
    ok(lib.cuMemcpyDtoD_v2(opened[job["refs"][dst]["ipc_handle"]], opened[job["refs"][src]["ipc_handle"]], nbytes),
       "cuMemcpyDtoD")
ok(lib.cuCtxSynchronize(), "cuCtxSynchronize")
print(json.dumps(report))
'''


def run_standin(refs, copies=()):
    job = {"device": torch.cuda.current_device(), "refs": refs, "copies": list(copies)}
    done = subprocess.run([sys.executable, "-c", RUNNER_STANDIN], input=json.dumps(job), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def full_size(monkeypatch):
    monkeypatch.delenv("CUTEGEN_PROBLEM_SCALE", raising=False)


def load_cuda(worker, name):
    return worker.call("load", problem=problem_path(name), device="cuda", seed=0)


def all_tensor_refs(prepared):
    refs = []
    for t in prepared["trials"]:
        refs += [r for r in t["inputs"] if r["kind"] == "tensor"] + [r for outs in t["outputs"] for r in outs]
    for s in prepared["timing"]:
        refs += [r for r in s["inputs"] if r["kind"] == "tensor"] + s["outputs"]
    return refs


def test_every_shared_buffer_is_a_whole_allocation_of_its_own(worker, small):
    load_cuda(worker, "layernorm")
    prepared = worker.call("prepare", trials=[{"seed": 1}, {"seed": 2, "kind": "signed"}], timing_sets=2)
    refs = all_tensor_refs(prepared)
    assert all(r["offset"] == 0 and len(base64.b64decode(r["ipc_handle"])) == 64 for r in refs)
    # Distinct buffers have distinct handles; the parameter copies are the only ones repeated.
    distinct = {r["ipc_handle"] for r in refs}
    assert len(distinct) == 2 * (1 + 2) + 2 * (1 + 1) + 3
    driver = cuda_driver.driver()
    session = worker.session.prepared
    tensors = [v for t in session.trials for v in t.forward + t.outputs[0] + t.outputs[1]] + session.params
    ordinal = torch.cuda.current_device()
    for t in tensors:
        base, size = driver.address_range(ordinal, t.data_ptr())
        assert base == t.data_ptr() and size % PAGE_BYTES == 0 and size >= t.numel() * t.element_size()
        assert base % PAGE_BYTES == 0
    # What the runner maps: exactly the buffer's own pages, with its contents, nothing past them.
    seen = run_standin(refs)
    for ref, view in zip(refs, seen):
        assert view["base_is_ptr"] and view["size"] == max(PAGE_BYTES, -(-ref["nbytes"] // PAGE_BYTES) * PAGE_BYTES)
    x = session.trials[0].forward[0]
    assert seen[0]["head"] == x.reshape(-1)[:4].cpu().numpy().tobytes().hex()


def test_a_kernel_in_another_process_writes_what_check_reads(worker, small):
    """The runner's side of the contract, minus the runner: an identity "kernel" copies each trial's
    input into both output sets through the IPC mappings. Identity is relu on torch.rand inputs only."""
    load_cuda(worker, "relu")
    prepared = worker.call("prepare", trials=[{"seed": 1}, {"seed": 2, "kind": "signed"}], timing_sets=0)
    refs, copies = [], []
    for t in prepared["trials"]:
        x = len(refs)
        refs += [t["inputs"][0], t["outputs"][0][0], t["outputs"][1][0]]
        copies += [(x, x + 1, t["inputs"][0]["nbytes"]), (x, x + 2, t["inputs"][0]["nbytes"])]
    run_standin(refs, copies)
    assert worker.call("check", trial=0)["pass"]
    assert worker.call("check", trial=1)["reason"] == "mismatch"


def test_prepare_releases_the_previous_buffers(worker, small, full_size):
    load_cuda(worker, "relu")
    torch.cuda.empty_cache()
    free_before, _ = torch.cuda.mem_get_info()
    worker.call("prepare", trials=[{"seed": s} for s in range(3)], timing_sets=2)
    arena_bytes = worker.session.prepared.arena.bytes
    assert arena_bytes == 3 * 3 * (1 << 30) + 2 * 2 * (1 << 30)
    torch.cuda.empty_cache()
    free_during, _ = torch.cuda.mem_get_info()
    assert free_before - free_during >= arena_bytes
    worker.call("prepare", trials=[], timing_sets=0)
    free_after, _ = torch.cuda.mem_get_info()
    assert free_after >= free_before - (64 << 20)


@pytest.mark.parametrize("name", ["relu", "softmax_rows", "matmul_square"])
def test_manifest_problems_at_full_size_with_the_judges_default_request(worker, full_size, name):
    meta = load_cuda(worker, name)
    assert meta["gpu"] == torch.cuda.get_device_name() and meta["memory"]["check_workspace_bytes"] > 0
    trials = [{"seed": 10 + i, "kind": "problem"} for i in range(5)]
    trials += [{"seed": 20, "kind": "signed"}, {"seed": 21, "kind": "scaled", "scale": 100.0}]
    worker.call("prepare", trials=trials, timing_sets=4, timing_seed=7)
    for i in range(len(trials)):
        for s in (0, 1):
            worker.call("debug_write_output", trial=i, set=s, mode="native")  # eager PyTorch, TF32 off
        report = worker.call("check", trial=i, precision="strict")
        assert report["pass"], report
    for s in range(4):
        worker.call("debug_write_output", trial=s, timing=True, mode="reference")
    assert worker.call("check_timing")["pass"]


def test_plain_tf32_gemm_fails_strict_at_full_size(worker, full_size):
    load_cuda(worker, "matmul_square")
    worker.call("prepare", trials=[{"seed": 1, "kind": "signed"}], timing_sets=0)
    for s in (0, 1):
        worker.call("debug_write_output", trial=0, set=s, mode="reference_tf32")
    report = worker.call("check", trial=0, precision="strict")
    assert report["reason"] == "mismatch", report
    assert worker.call("check", trial=0, precision="tf32")["pass"]


def test_baselines_on_the_cuda_clock(worker, full_size, tmp_path):
    meta = load_cuda(worker, "relu")
    worker.call("prepare", trials=[], timing_sets=4, timing_seed=3)
    result = worker.call("time_baselines", modes=["eager", "compile"], warmup_ms=50, runs=20,
                         cache_dir=str(tmp_path))
    floor_ms = meta["min_bytes"] / 6e12 * 1e3  # faster than any HBM would be a broken clock
    eager = result["eager"]
    assert eager["runs"] == 20 and floor_ms < eager["min_ms"] <= eager["median_ms"] < 50 * floor_ms
    assert "median_ms" in result["compile"], result["compile"]
    assert worker.call("time_baselines", modes=["eager", "compile"], warmup_ms=50, runs=20,
                       cache_dir=str(tmp_path))["cached"] is True


def test_calibrate(worker):
    cal = worker.call("calibrate")
    assert cal["gpu"] == torch.cuda.get_device_name()
    assert 500 < cal["hbm_gbps"] < 20000
    t = cal["tflops"]
    assert 5 < t["fp32"] < t["tf32"] < t["bf16"] and t["fp16"] > t["tf32"]
