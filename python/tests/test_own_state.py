"""The worker notices when another process changed its scheduling state during an evaluation
(own_state.py) and stops. The changes are made from outside, by pid, as a runner that escaped its
sandbox would: to a stand-in worker process, so this test process keeps its own state."""
import ctypes
import json
import os
import platform
import resource
import subprocess
import sys

import pytest

from conftest import ROOT, WorkerError, problem_path
from cutegen_worker import own_state

STAND_IN = """
import json, sys
from cutegen_worker import own_state
before = own_state.snapshot()
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps(own_state.differences(before, own_state.snapshot())), flush=True)
"""


def _ioprio_set_idle(pid: int):
    number = {"x86_64": 251, "aarch64": 30}.get(platform.machine())
    if number is None:
        pytest.skip(f"no ioprio_set number for {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    idle = 3 << 13  # IOPRIO_CLASS_IDLE, level 0
    assert libc.syscall(ctypes.c_long(number), ctypes.c_int(own_state.IOPRIO_WHO_PROCESS), ctypes.c_int(pid),
                        ctypes.c_int(idle)) == 0, os.strerror(ctypes.get_errno())


def _write_oom_score_adj(pid: int):
    with open(f"/proc/{pid}/oom_score_adj", "w") as f:
        f.write("500")  # raising it needs no privilege: the OOM killer then picks the worker first


def _pin(pid: int):
    cpus = os.sched_getaffinity(pid)
    if len(cpus) < 2:
        pytest.skip("one CPU: pinning changes nothing")
    os.sched_setaffinity(pid, {min(cpus)})


CHANGES = {
    "nice value": lambda pid: os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid) + 1),
    "scheduler policy": lambda pid: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)),
    "CPU affinity": _pin,
    "RLIMIT_CPU": lambda pid: resource.prlimit(pid, resource.RLIMIT_CPU, (3600, resource.RLIM_INFINITY)),
    "I/O priority": _ioprio_set_idle,
    "OOM score adjustment": _write_oom_score_adj,
}


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_a_change_made_from_another_process_is_named(what):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.Popen([sys.executable, "-c", STAND_IN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "ready"
        CHANGES[what](proc.pid)
        proc.stdin.write("\n")
        proc.stdin.flush()
        changed = json.loads(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()
    assert len(changed) == 1 and changed[0].startswith(what), changed


def test_nothing_changed_is_no_difference():
    before = own_state.snapshot()
    assert own_state.differences(before, own_state.snapshot()) == []
    own_state.require_unchanged(before, "here")  # does not raise


@pytest.fixture
def restore_own_state():
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    cpus = os.sched_getaffinity(0)
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
    os.sched_setaffinity(0, cpus)


@pytest.mark.parametrize("meddle,named", [("nofile", "RLIMIT_NOFILE"), ("affinity", "CPU affinity")])
def test_an_evaluation_that_changed_the_worker_stops_it(worker, small, restore_own_state, meddle, named):
    if meddle == "affinity" and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: pinning changes nothing")
    worker.load(problem_path("relu"))
    with pytest.raises(WorkerError) as err:
        worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                    trials=[{"seed": 1, "kind": "problem"}], warmup=1, runs=2, precision="strict", call_timeout_s=10.0,
                    work_dir="/tmp/cutegen-test-work", fake_runner={"mode": "reference", "meddle": meddle})
    assert err.value.kind == "internal"
    assert named in err.value.message and "changed during the evaluation" in err.value.message
    assert worker.dispatcher.stopped  # the protocol loop ends after this answer


def test_an_honest_evaluation_leaves_the_worker_running(worker, small):
    worker.load(problem_path("relu"))
    result = worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                         trials=[{"seed": 1, "kind": "problem"}], warmup=1, runs=2, precision="strict",
                         call_timeout_s=10.0, work_dir="/tmp/cutegen-test-work", fake_runner={"mode": "reference"})
    assert result["verdict"] == "pass", result
    assert not worker.dispatcher.stopped
