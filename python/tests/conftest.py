"""Shared helpers: an in-process worker (Session + Dispatcher with the fake runner installed) and problem paths."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBLEMS = os.path.join(ROOT, "problems")
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

# Without a GPU, Triton's kernels (the fused comparison, test_fused_compare.py) run in its interpreter on CPU
# tensors; Triton reads this when it is first imported, so it is set before anything imports it.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from cutegen_worker.protocol import Dispatcher  # noqa: E402
from cutegen_worker.session import Session  # noqa: E402

# The fake runner is test code beside this file, not in the worker package.
import fake_runner  # noqa: E402

# The tensors are tiny: one thread is faster than several fighting over a shared CI machine's cores.
torch.set_num_threads(1)

# Divides the big dimensions of the test problems: relu becomes 64 x 1024, matmul_square 64^3.
SMALL = 64


def problem_path(name: str) -> str:
    return os.path.join(PROBLEMS, f"{name}.py")


# A relu evaluation against the test hooks' fake runner, which reports what a test asks for (`fake`: waits,
# CPU time, ...); the fake counts every call: two per trial, then the two warm-up calls, then the timed ones.
FAKE_RUNNER_TRIALS = [{"seed": 1, "kind": "problem", "params": "own"}]
FAKE_RUNNER_FIRST_TIMED = 2 + 2


def evaluate_relu_with_fake_runner(worker, runs, **fake):
    worker.load(problem_path("relu"))
    return worker.call("evaluate_candidate", runner=["cutegen-runner"], library="/nonexistent/kernel.so",
                       trials=FAKE_RUNNER_TRIALS, warmup=2, runs=runs, precision="strict", call_timeout_s=10.0,
                       work_dir="/tmp/cutegen-test-work", fake_runner=dict(mode="reference", **fake))


class WorkerError(Exception):
    def __init__(self, response):
        super().__init__(response["error"])
        self.kind = response["kind"]
        self.message = response["error"]


class InProcessWorker:
    """Speaks the protocol's request/response objects without a subprocess (fast)."""

    def __init__(self):
        self.session = Session()
        fake_runner.install(self.session)  # sessions take `fake_runner` specs (fake_runner.py)
        self.dispatcher = Dispatcher(self.session)
        self.next_id = 0

    def raw(self, op: str, **fields) -> dict:
        self.next_id += 1
        response = self.dispatcher.handle(dict(id=self.next_id, op=op, **fields))
        assert response["id"] == self.next_id
        return response

    def call(self, op: str, **fields) -> dict:
        response = self.raw(op, **fields)
        if not response["ok"]:
            raise WorkerError(response)
        return response["result"]

    def load(self, path: str, seed: int = 0) -> dict:
        return self.call("load", problem=path, device="cpu", seed=seed)


@pytest.fixture
def worker():
    return InProcessWorker()


@pytest.fixture
def small(monkeypatch):
    """Sets CUTEGEN_PROBLEM_SCALE for the test; returns a function to choose another scale."""
    monkeypatch.setenv("CUTEGEN_PROBLEM_SCALE", str(SMALL))
    return lambda scale: monkeypatch.setenv("CUTEGEN_PROBLEM_SCALE", str(scale))


def write_problem(tmp_path, text: str, name: str = "problem.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device (skipped with 'no CUDA device' elsewhere)")
