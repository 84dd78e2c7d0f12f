"""The worker as cutegen starts it: `python3 -m cutegen_worker`, JSON lines on stdin/stdout.

One subprocess for the whole module (importing torch takes seconds). stdout must carry nothing but
one response per request, whatever the problem file prints."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, SMALL, problem_path, write_problem

NOISY = '''
import sys
import torch
import torch.nn as nn

print("hello from import")


class Model(nn.Module):
    def forward(self, x):
        print("hello from forward")
        sys.stdout.write("raw write\\n")
        return torch.relu(x)


def get_inputs():
    return [torch.rand(8, 8)]


def get_init_inputs():
    return []
'''


@pytest.fixture(scope="module")
def proc():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONUNBUFFERED="1",
               CUTEGEN_PROBLEM_SCALE=str(SMALL), OMP_NUM_THREADS="1")
    # The worker with the fake runner installed; test_candidate_session.py proves a plain one refuses it.
    p = subprocess.Popen([sys.executable, os.path.join(ROOT, "python", "tests", "fake_runner_worker.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    yield p
    if p.poll() is None:
        p.kill()
    p.wait()


def send(proc, line: str) -> dict:
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    out = proc.stdout.readline()
    assert out.endswith("\n"), f"no complete response line: {out!r}"
    return json.loads(out)  # anything that is not one JSON object per line fails here


def request(proc, **fields) -> dict:
    return send(proc, json.dumps(fields))


def test_a_session(proc, tmp_path):
    path = write_problem(tmp_path, NOISY)
    load = request(proc, id=1, op="load", problem=path, device="cpu", seed=0)
    assert load["id"] == 1 and load["ok"] is True, load
    meta = load["result"]
    assert meta["outputs"] == [{"kind": "tensor", "dtype": "float32", "shape": [8, 8]}]
    assert meta["aten_ops"] == ["aten::relu"] and meta["workload_class"] == "elementwise"
    prep = request(proc, id=2, op="prepare_profile", seed=5)
    assert prep["id"] == 2 and prep["ok"] is True
    ref = prep["result"]["inputs"][0]
    assert set(ref) == {"kind", "dtype", "shape", "stride", "nbytes", "ipc_handle", "offset", "data_ptr"}
    assert (ref["kind"], ref["dtype"], ref["shape"], ref["stride"], ref["nbytes"]) == ("tensor", "float32", [8, 8],
                                                                                      [8, 1], 256)
    assert len(prep["result"]["outputs"]) == 1
    # Nobody wrote the outputs (the fake runner writes nothing): unwritten. Non-finite numbers travel as
    # strings (JSON has none).
    evaluation = request(proc, id=3, op="evaluate_candidate", runner=["r"], library="l", trials=[{"seed": 5}],
                         warmup=0, runs=0, call_timeout_s=5.0, work_dir=str(tmp_path),
                         fake_runner={"mode": "none"})
    assert evaluation["ok"] is True and evaluation["result"]["verdict"] == "unwritten"
    failed = evaluation["result"]["checks"][evaluation["result"]["failed_check"]]
    assert failed["outputs"][0]["first_bad"][0]["got"] == "NaN"


def test_release_gpu_drops_the_problem_until_it_is_loaded_again(proc, tmp_path):
    assert request(proc, id=20, op="load", problem=problem_path("relu"), device="cpu")["ok"] is True
    released = request(proc, id=21, op="release_gpu")
    assert released["ok"] is True and released["result"] == {"reserved_bytes": 0}, released
    # Nothing is kept: a request that needs the problem says to load it (cutegen's judge does, after a release).
    after = request(proc, id=22, op="prepare_profile", seed=5)
    assert (after["ok"], after["kind"]) == (False, "request") and "send `load` first" in after["error"], after
    assert request(proc, id=23, op="load", problem=problem_path("relu"), device="cpu")["ok"] is True
    assert request(proc, id=24, op="prepare_profile", seed=5)["ok"] is True


def test_errors_are_responses_and_the_worker_goes_on(proc, tmp_path):
    assert send(proc, "this is not json") == {
        "id": None, "ok": False, "kind": "request",
        "error": "request is not valid JSON: Expecting value: line 1 column 1 (char 0)"}
    unknown = request(proc, id=10, op="frobnicate")
    assert (unknown["id"], unknown["ok"], unknown["kind"]) == (10, False, "request")
    assert "unknown op 'frobnicate'" in unknown["error"]
    bad_request = request(proc, id=11, op="evaluate_candidate", runner=["r"], library="l", trials=[], warmup=0,
                          runs=-1, call_timeout_s=1.0, work_dir="/tmp")
    assert bad_request["kind"] == "request"
    bad = request(proc, id=12, op="load", problem=str(tmp_path / "missing.py"), device="cpu")
    assert (bad["id"], bad["ok"], bad["kind"]) == (12, False, "problem")
    good = request(proc, id=13, op="load", problem=problem_path("relu"), device="cpu")
    assert good["ok"] is True and good["result"]["name"] == "relu"


def test_shutdown_answers_and_exits(proc):
    assert request(proc, id=99, op="shutdown") == {"id": 99, "ok": True, "result": {}}
    assert proc.wait(timeout=30) == 0
    assert proc.stdout.read() == ""  # nothing after the last response
    stderr = proc.stderr.read()
    assert "hello from import" in stderr and "hello from forward" in stderr and "raw write" in stderr


def test_calibrate_measures_a_copy_and_a_read_and_takes_the_better(worker):
    """Both points the floor interpolates (on an H200 a read-mostly loss beat the copy's figure and printed
    103% of the physical limit, while a ReLU cannot reach the read-only figure); `hbm_gbps` is the better,
    for a calibration read without a traffic mix. On the CPU the sizes are small and only the shape is checked."""
    cal = worker.call("calibrate", device="cpu")
    assert cal["version"] == 3 and cal["copy_gbps"] > 0 and cal["read_gbps"] > 0
    assert cal["hbm_gbps"] == max(cal["copy_gbps"], cal["read_gbps"])
