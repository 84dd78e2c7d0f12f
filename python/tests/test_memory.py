"""prepare refuses what cannot fit, before allocating, with a message the judge can act on."""
import pytest
import torch

from conftest import SMALL, WorkerError, problem_path
from cutegen_worker import memory
from cutegen_worker.errors import ProblemError, RequestError

GIB = 1 << 30
ESTIMATE = {"bytes_per_trial": 3 * GIB, "bytes_per_timing_set": 2 * GIB, "bytes_params": GIB,
            "check_workspace_bytes": 4 * GIB}


def free(monkeypatch, nbytes):
    monkeypatch.setattr(memory, "device_memory", lambda device: (nbytes, 2 * nbytes))


def test_a_request_that_fits_passes(monkeypatch):
    free(monkeypatch, 40 * GIB)
    memory.check_fits("p.py", ESTIMATE, 7, 4, torch.device("cpu"))  # 5 + 21 + 8 = 34 GiB


def test_too_many_trials_says_how_many_fit(monkeypatch):
    free(monkeypatch, 30 * GIB)
    with pytest.raises(RequestError) as error:
        memory.check_fits("p.py", ESTIMATE, 7, 4, torch.device("cpu"))
    message = str(error.value)
    assert "34.0 GiB" in message and "30.0 GiB is free" in message
    assert "at most 5 trials fit" in message  # (30 - 5 - 8) // 3


def test_a_problem_too_big_for_one_trial_is_the_problems_fault(monkeypatch):
    free(monkeypatch, 7 * GIB)
    with pytest.raises(ProblemError, match="one correctness trial needs 8.0 GiB"):
        memory.check_fits("p.py", ESTIMATE, 1, 0, torch.device("cpu"))


def test_prepare_checks_before_allocating(worker, small, monkeypatch):
    worker.load(problem_path("relu"))
    free(monkeypatch, 4 * (4096 // SMALL) * (65536 // SMALL) * 4)  # room for one trial, not two
    with pytest.raises(WorkerError) as error:
        worker.call("prepare", trials=[{"seed": 1}, {"seed": 2}])
    assert error.value.kind == "request" and "at most 1 trials fit" in error.value.message
    assert worker.session.prepared is None
    assert len(worker.call("prepare", trials=[{"seed": 1}])["trials"]) == 1
