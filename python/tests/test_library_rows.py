"""The row-reduction library kernels' problems (issue 15) and the invariants of their source files.

The kernels themselves run only on a GPU (scripts/gpu-check --only softmax_cluster,... ); here: their
KernelBench-size problems load, pass the judge's reference path at a small scale and mean what
KernelBench means, and log_softmax_cluster.cu and log_softmax_ticket.cu stay their softmax files with one
flag flipped.
"""
import importlib.util
import os

import pytest
import torch

from conftest import ROOT, problem_path

KERNELS = os.path.join(ROOT, "library")

# name -> (aten ops, workload class)
EXPECTED_OPS = {
    "log_softmax_large": (["aten::_log_softmax"], "reduction"),
    "layernorm_large": (["aten::native_layer_norm"], "reduction"),
    "rmsnorm_large": (["aten::pow", "aten::mean", "aten::add", "aten::sqrt", "aten::div"], "reduction"),
}


def load_module(name, monkeypatch, scale):
    if scale is None:
        monkeypatch.delenv("CUTEGEN_PROBLEM_SCALE", raising=False)
    else:
        monkeypatch.setenv("CUTEGEN_PROBLEM_SCALE", str(scale))
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", problem_path(name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(EXPECTED_OPS))
def test_row_problems_load_and_the_reference_passes(worker, small, name):
    meta = worker.load(problem_path(name))
    assert (meta["aten_ops"], meta["workload_class"]) == EXPECTED_OPS[name]
    result = worker.call("evaluate_candidate", runner=["r"], library="l", warmup=1, runs=4, trials=[{"seed": 1, "kind": "problem", "params": "own"}, {"seed": 2, "kind": "signed"}],
                         call_timeout_s=5.0, work_dir="/tmp", fake_runner={"mode": "reference"})
    assert result["verdict"] == "pass", result["reason"]


def test_full_sizes_are_kernelbench_sizes(monkeypatch):
    # Shapes only: nothing is allocated at full size.
    m = load_module("log_softmax_large", monkeypatch, None)
    assert (m.batch_size, m.dim) == (4096, 393216)
    m = load_module("layernorm_large", monkeypatch, None)
    assert (m.batch_size, m.features, m.dim1, m.dim2) == (16, 64, 256, 256)
    m = load_module("rmsnorm_large", monkeypatch, None)
    assert (m.batch_size, m.features, m.dim1, m.dim2) == (112, 64, 512, 512)


def test_scale_keeps_the_structure_the_kernels_rely_on(monkeypatch):
    m = load_module("layernorm_large", monkeypatch, 16)
    assert (m.batch_size, m.features, m.dim1, m.dim2) == (16, 4, 16, 16)  # 16 rows stay
    m = load_module("rmsnorm_large", monkeypatch, 16)
    assert (m.batch_size, m.features, m.dim1, m.dim2) == (7, 64, 32, 32)  # 64 features stay


def test_rmsnorm_normalises_over_dim_1_without_affine(monkeypatch):
    m = load_module("rmsnorm_large", monkeypatch, 64)
    model = m.Model(*m.get_init_inputs())
    assert list(model.parameters()) == [] and list(model.buffers()) == []
    x = torch.randn(2, 64, 3, 5, dtype=torch.float64)
    y = model.double()(x)
    for b, i, j in [(0, 0, 0), (1, 2, 4)]:
        column = x[b, :, i, j]
        expected = column / torch.sqrt((column * column).mean() + 1e-5)
        assert torch.allclose(y[b, :, i, j], expected, rtol=1e-12, atol=0)


def test_layernorm_large_has_nontrivial_affine_parameters_in_contract_order(monkeypatch):
    m = load_module("layernorm_large", monkeypatch, 64)
    torch.manual_seed(0)
    model = m.Model(*m.get_init_inputs())
    names = [n for n, _ in model.named_parameters()]
    assert names == ["ln.weight", "ln.bias"]
    assert tuple(model.ln.weight.shape) == (m.features, m.dim1, m.dim2)
    assert not torch.all(model.ln.weight == 1) and not torch.all(model.ln.bias == 0)
    assert model.ln.eps == 1e-5  # the kernel's kEps


def strip_header(text):
    """The file from its first #include on: the header comment is allowed to differ."""
    return text[text.index("#include"):]


@pytest.mark.parametrize("family", ["cluster", "ticket"])
def test_the_log_softmax_file_is_the_softmax_file_with_the_flag_flipped(family):
    with open(os.path.join(KERNELS, f"softmax_{family}.cu")) as f:
        softmax = strip_header(f.read()).splitlines()
    with open(os.path.join(KERNELS, f"log_softmax_{family}.cu")) as f:
        log_softmax = strip_header(f.read()).splitlines()
    assert len(softmax) == len(log_softmax)
    differing = [(a, b) for a, b in zip(softmax, log_softmax) if a != b]
    assert differing == [(f"constexpr bool kLogSoftmax = false;  // log_softmax_{family}.cu: true",
                          f"constexpr bool kLogSoftmax = true;  // softmax_{family}.cu: false")]
