"""The `describe` op (problem_facts.py): what `cutegen export PROBLEM KERNEL` exports for, without a GPU."""
import os
import time

from conftest import ROOT, InProcessWorker, WorkerError, problem_path, write_problem


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


# What `load` reports that `cutegen prompt` shows: prompt_facts must say the same, without the memory.
PROMPT_KEYS = ("name", "inputs", "params", "outputs", "init_inputs", "dtype", "aten_ops", "workload_class", "flops",
               "min_bytes", "reference_dtype", "torch_version")


SMALL_GEMM_CONV = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x):
        return torch.softmax(self.fc(torch.relu(self.conv(x)).flatten(1)), dim=1)

def get_inputs():
    return [torch.randn(2, 3, 16, 16)]

def get_init_inputs():
    return []
'''


SMALL_NORM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.register_buffer("gain", torch.full((dim,), 2.0))

    def forward(self, x):
        return self.norm(x) * self.gain

def get_inputs():
    return [torch.randn(4, 32)]

def get_init_inputs():
    return [32]
'''


def test_prompt_facts_are_what_load_reports_of_the_problem(tmp_path):
    # Small problems: `load` on the CPU of the project's own (relu.py, softmax_rows.py) takes minutes.
    attack_problems = os.path.join(ROOT, "attacks", "problems")
    paths = [problem_path("sum_dim")]
    paths += [os.path.join(attack_problems, f"{n}.py") for n in ("gather_fixed_index", "bool_threshold")]
    paths.append(write_problem(tmp_path, SMALL_GEMM_CONV, "gemm_conv.py"))
    paths.append(write_problem(tmp_path, SMALL_NORM, "norm.py"))
    for path in paths:
        worker = InProcessWorker()
        loaded = worker.call("load", problem=path, device="cpu", seed=0)
        facts = worker.call("prompt_facts", problem=path)
        assert facts["gpu"] == ""
        for key in PROMPT_KEYS:
            assert facts[key] == loaded[key], (path, key)
        assert facts.get("reference_note") == loaded.get("reference_note"), path


def test_a_kernelbench_size_prompt_costs_no_memory():
    start = time.monotonic()
    facts = InProcessWorker().call("prompt_facts", problem=problem_path("softmax_large"))
    assert facts["inputs"][0]["shape"] == [4096, 393216]
    assert facts["workload_class"] == "reduction" and "aten::_softmax" in facts["aten_ops"]
    assert facts["min_bytes"] == 2 * 4096 * 393216 * 4
    assert facts["reference_dtype"] == "float64"
    assert time.monotonic() - start < 30  # meta tensors: no 6 GiB on the CPU (load there needed over 24 GiB)
