"""Problem files are imported without the network (cutegen_worker/confinement.py).

Each test starts the worker as cutegen does (`python -m cutegen_worker`) and loads a problem file that
tries the network at import and reports what happened in the error it raises.
"""
import json
import os
import platform
import re
import socket
import subprocess
import sys
import threading

import pytest

from conftest import ROOT, SMALL, problem_path, write_problem
from cutegen_worker import confinement

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"),
                                reason="the network filter exists for x86_64 and aarch64 only")

PROBE = '''
import json, os, socket, subprocess, sys, tempfile
report = {}
def attempt(name, fn):
    try:
        fn()
        report[name] = "ok"
    except OSError as exc:
        report[name] = type(exc).__name__
def tcp():
    with socket.create_connection(("127.0.0.1", __PORT__), timeout=5):
        pass
def unix():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM):
        pass
attempt("tcp", tcp)
attempt("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close())
attempt("unix", unix)
child = subprocess.run([sys.executable, "-c", "import socket; socket.socket()"], capture_output=True, text=True)
report["child_tcp"] = "PermissionError" if "PermissionError" in child.stderr else "ok" if child.returncode == 0 else child.stderr[-200:]
report["home"] = os.environ.get("HOME")
raise RuntimeError("REPORT" + json.dumps(report) + "END")
'''


@pytest.fixture
def listener():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield server.getsockname()[1]
    stop.set()
    t.join()
    server.close()


def run_worker(tmp_path, requests, **env_extra):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONUNBUFFERED="1",
               CUTEGEN_PROBLEM_SCALE=str(SMALL), OMP_NUM_THREADS="1", **env_extra)
    lines = "".join(json.dumps(dict(id=i + 1, **r)) + "\n" for i, r in enumerate(requests))
    lines += json.dumps({"id": 0, "op": "shutdown"}) + "\n"
    p = subprocess.run([sys.executable, "-m", "cutegen_worker"], input=lines, capture_output=True, text=True,
                       env=env, timeout=300)
    return p, [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def probe_report(tmp_path, port, **env):
    path = write_problem(tmp_path, PROBE.replace("__PORT__", str(port)))
    p, responses = run_worker(tmp_path, [dict(op="load", problem=path, device="cpu", seed=0)], **env)
    load = responses[0]
    assert load["ok"] is False, load
    found = re.search(r"REPORT(\{.*?\})END", load["error"])
    assert found, (load, p.stderr[-2000:])
    return json.loads(found.group(1))


def test_a_problem_file_cannot_reach_the_network_but_unix_sockets_work(tmp_path, listener):
    report = probe_report(tmp_path, listener)
    assert report["tcp"] == "PermissionError", report
    assert report["udp6"] == "PermissionError", report
    assert report["unix"] == "ok", report
    assert report["child_tcp"] == "PermissionError", "processes the problem starts inherit the filter: %s" % report


def test_the_network_can_be_left_open_on_request(tmp_path, listener):
    report = probe_report(tmp_path, listener, CUTEGEN_WORKER_NETWORK="allow")
    assert report["tcp"] == "ok", report  # the probe itself can reach the listener: the test means something
    assert report["child_tcp"] == "ok", report


def test_an_unknown_network_setting_stops_the_worker_with_its_name(tmp_path):
    p, responses = run_worker(tmp_path, [], CUTEGEN_WORKER_NETWORK="off")
    assert p.returncode == 2 and responses == [], (p.returncode, responses)
    assert "CUTEGEN_WORKER_NETWORK='off': use deny (the default) or allow" in p.stderr


def test_torch_still_works_under_the_filter(tmp_path):
    # relu's load and eager baseline after the filter is in place. torch.compile under the filter (inductor
    # and its compile workers) runs in bench_cli's CPU baselines suite, which takes minutes, not here.
    fields = dict(modes=["eager"], warmup_ms=1.0, runs=2, cache_dir=str(tmp_path / "cache"), seed=1)
    p, responses = run_worker(tmp_path, [
        dict(op="load", problem=problem_path("relu"), device="cpu", seed=0),
        dict(op="time_baselines", **fields),
    ])
    assert responses[0]["ok"], (responses[0], p.stderr[-3000:])
    assert responses[1]["ok"] and responses[1]["result"]["eager"]["runs"] == 2, (responses[1], p.stderr[-3000:])


def test_the_filter_program_refuses_only_other_socket_domains_and_foreign_abis():
    for machine in ("x86_64", "aarch64"):
        prog = confinement.filter_program(machine)
        rets = [ins[3] for ins in prog if ins[0] == 0x06]
        assert rets == [0x00050000 | 1, 0x7FFF0000, 0x80000000], (machine, prog)
        for i, (code, jt, jf, _) in enumerate(prog):  # every jump lands inside the program
            if code in (0x15, 0x35):
                assert i + 1 + jt < len(prog) and i + 1 + jf < len(prog), (machine, i)
    with pytest.raises(confinement.WorkerError, match="CUTEGEN_WORKER_NETWORK=allow"):
        confinement.filter_program("riscv64")
