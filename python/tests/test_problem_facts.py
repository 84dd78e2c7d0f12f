"""The `describe` op (problem_facts.py): what `cutegen export PROBLEM KERNEL` exports for, without a GPU."""
import time

from conftest import InProcessWorker, WorkerError, problem_path, write_problem


def test_layernorm_parameters_buffers_and_constructor_on_meta():
    facts = InProcessWorker().call("describe", problem=problem_path("layernorm"))
    assert facts["ran_on"] == "meta"
    assert facts["name"] == "layernorm"
    assert [i["name"] for i in facts["inputs"]] == ["x"]
    assert [(p["name"], p["buffer"]) for p in facts["params"]] == [("norm.weight", False), ("norm.bias", False),
                                                                  ("gain", True)]
    assert facts["outputs"] == [{"kind": "tensor", "dtype": "float32", "shape": facts["inputs"][0]["shape"]}]
    assert facts["dtype"] == "float32"


def test_a_six_gib_problem_costs_nothing():
    start = time.monotonic()
    facts = InProcessWorker().call("describe", problem=problem_path("relu_large"))
    assert facts["ran_on"] == "meta"
    assert facts["inputs"][0]["shape"] == [4096, 393216]
    assert time.monotonic() - start < 30  # meta tensors: no 6 GiB on the CPU


def test_scalars_and_constructor_values(tmp_path):
    path = write_problem(tmp_path, '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x, alpha: float):
        return torch.sum(x * alpha, dim=self.dim) + self.eps

def get_inputs():
    return [torch.rand(4, 8), 0.5]

def get_init_inputs():
    return [1]
''')
    facts = InProcessWorker().call("describe", problem=path)
    assert facts["inputs"][1] == {"name": "alpha", "kind": "scalar", "dtype": "float64", "value": 0.5}
    assert facts["outputs"][0]["shape"] == [4]
    assert facts["init_inputs"] == [{"name": "dim", "kind": "scalar", "dtype": "int64", "value": 1},
                                    {"name": "eps", "kind": "scalar", "dtype": "float64", "value": 1e-05,
                                     "default": True}]


def test_a_forward_that_reads_values_runs_on_the_cpu(tmp_path):
    path = write_problem(tmp_path, '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x[: int(x.sum().item() > 0) + 1]

def get_inputs():
    return [torch.ones(4, 8)]

def get_init_inputs():
    return []
''')
    facts = InProcessWorker().call("describe", problem=path)
    assert facts["ran_on"] == "cpu"
    assert facts["outputs"][0]["shape"] == [2, 8]


def test_a_broken_problem_is_the_problems_error(tmp_path):
    path = write_problem(tmp_path, '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        raise RuntimeError("broken on purpose")

def get_inputs():
    return [torch.ones(4)]

def get_init_inputs():
    return []
''')
    worker = InProcessWorker()
    try:
        worker.call("describe", problem=path)
    except WorkerError as exc:
        assert exc.kind == "problem"
        assert "broken on purpose" in str(exc)
    else:
        raise AssertionError("describe answered for a forward() that raises")
