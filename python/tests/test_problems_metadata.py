"""Every test problem loads on the CPU at its small size, and its metadata is exactly right."""
import pytest
import torch

from conftest import SMALL, problem_path

ALL_PROBLEMS = ["relu", "gelu_tanh", "softmax_rows", "matmul_square", "matmul_bias_gelu", "row_sum", "scale_add",
                "layernorm", "split_halves", "matmul_fp16", "matmul_bf16_nt", "relu_large", "matmul_square_bf16",
                "matmul_trans_a", "matmul_trans_b", "matmul_trans_both", "tensor3d_matmul", "matmul_odd_n"]

# name -> (aten ops, workload class)
EXPECTED_OPS = {
    "relu": (["aten::relu"], "elementwise"),
    "softmax_rows": (["aten::_softmax"], "reduction"),
    "matmul_square": (["aten::mm"], "gemm"),
    "matmul_bias_gelu": (["aten::t", "aten::addmm", "aten::gelu"], "gemm"),
    "row_sum": (["aten::sum"], "reduction"),
    "scale_add": (["aten::mul", "aten::add"], "elementwise"),
    "layernorm": (["aten::native_layer_norm", "aten::mul"], "reduction"),
    "split_halves": (["aten::split", "aten::add", "aten::sub"], "elementwise"),
    "matmul_fp16": (["aten::mm"], "gemm"),
    "matmul_bf16_nt": (["aten::permute", "aten::mm"], "gemm"),
    "gelu_tanh": (["aten::gelu"], "elementwise"),
    "relu_large": (["aten::relu"], "elementwise"),
    "matmul_square_bf16": (["aten::mm"], "gemm"),
    "matmul_trans_a": (["aten::permute", "aten::mm"], "gemm"),
    "matmul_trans_b": (["aten::permute", "aten::mm"], "gemm"),
    "matmul_trans_both": (["aten::permute", "aten::mm"], "gemm"),
    "matmul_odd_n": (["aten::mm"], "gemm"),
    "tensor3d_matmul": (["aten::view", "aten::mm", "aten::_unsafe_view"], "gemm"),  # the batch folds into M
}


@pytest.mark.parametrize("name", ALL_PROBLEMS)
def test_every_problem_loads_and_the_reference_passes(worker, small, name):
    meta = worker.load(problem_path(name))
    assert meta["name"] == name
    assert (meta["aten_ops"], meta["workload_class"]) == EXPECTED_OPS[name]
    result = worker.call("evaluate_candidate", runner=["r"], library="l", warmup=1, runs=4, trials=[{"seed": 1, "kind": "problem", "params": "own"}, {"seed": 2, "kind": "signed"}],
                         call_timeout_s=5.0, work_dir="/tmp", fake_runner={"mode": "reference"})
    assert result["verdict"] == "pass", result["reason"]


def test_problem_scale_keeps_the_real_size_available(worker, monkeypatch):
    import importlib.util

    monkeypatch.delenv("CUTEGEN_PROBLEM_SCALE", raising=False)
    spec = importlib.util.spec_from_file_location("relu_full_size", problem_path("relu"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (module.batch_size, module.dim) == (4096, 65536)


def test_relu_metadata(worker, small):
    meta = worker.load(problem_path("relu"))
    rows, cols = 4096 // SMALL, 65536 // SMALL
    assert meta["inputs"] == [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [rows, cols]}]
    assert meta["params"] == []
    assert meta["outputs"] == [{"kind": "tensor", "dtype": "float32", "shape": [rows, cols]}]
    assert meta["flops"] == rows * cols
    assert meta["min_bytes"] == 2 * rows * cols * 4
    assert (meta["dtype"], meta["reference_dtype"]) == ("float32", "float64")


def test_softmax_counts_five_flops_per_element(worker, small):
    meta = worker.load(problem_path("softmax_rows"))
    n = (4096 // SMALL) * (65536 // SMALL)
    assert meta["flops"] == 5 * n
    assert meta["min_bytes"] == 2 * n * 4


def test_matmul_flops_and_bytes(worker, small):
    meta = worker.load(problem_path("matmul_square"))
    n = 4096 // SMALL
    assert [i["name"] for i in meta["inputs"]] == ["A", "B"]
    assert meta["flops"] == 2 * n ** 3
    assert meta["min_bytes"] == 3 * n * n * 4


def test_linear_parameters_and_fused_flops(worker, small):
    meta = worker.load(problem_path("matmul_bias_gelu"))
    m, k, n = 4096 // SMALL, 4096 // SMALL, 8192 // SMALL
    assert meta["params"] == [
        {"name": "fc.weight", "kind": "tensor", "dtype": "float32", "shape": [n, k], "buffer": False},
        {"name": "fc.bias", "kind": "tensor", "dtype": "float32", "shape": [n], "buffer": False},
    ]
    assert meta["flops"] == 2 * m * n * k + m * n  # addmm, then gelu once per output element
    assert meta["min_bytes"] == 4 * (m * k + n * k + n + m * n)


def test_parameters_come_before_buffers_whatever_the_registration_order(worker, small):
    meta = worker.load(problem_path("layernorm"))
    hidden = 8192 // SMALL
    assert [(p["name"], p["buffer"], p["shape"]) for p in meta["params"]] == [
        ("norm.weight", False, [hidden]), ("norm.bias", False, [hidden]), ("gain", True, [hidden])]


def test_the_runner_gets_forward_inputs_then_params_then_buffers_as_shared_copies(worker, small):
    worker.load(problem_path("layernorm"))
    refs = worker.call("prepare_profile", seed=3)
    model = worker.session.problem.model
    own = [model.norm.weight, model.norm.bias, model.gain]
    assert [r["shape"] for r in refs["inputs"]] == [[4096 // SMALL, 8192 // SMALL]] + [[8192 // SMALL]] * 3
    ptrs = [r["data_ptr"] for r in refs["inputs"][1:]]
    # The runner gets shared copies, never the model's own tensors (those are the pristine values).
    assert not set(ptrs) & {p.data_ptr() for p in own}
    assert len(refs["outputs"]) == 1


def test_scalar_forward_argument(worker, small):
    meta = worker.load(problem_path("scale_add"))
    assert meta["inputs"][2] == {"name": "alpha", "kind": "scalar", "dtype": "float64", "value": 0.5}
    n = (4096 // SMALL) * (65536 // SMALL)
    assert meta["flops"] == 2 * n
    assert meta["min_bytes"] == 3 * n * 4  # the scalar moves no bytes
    refs = worker.call("prepare_profile", seed=3)
    assert refs["inputs"][2] == {"kind": "scalar", "dtype": "float64", "value": 0.5}


def test_tuple_output(worker, small):
    meta = worker.load(problem_path("split_halves"))
    rows, half = 4096 // SMALL, 32768 // SMALL // 2
    assert meta["outputs"] == [{"kind": "tensor", "dtype": "float32", "shape": [rows, half]}] * 2
    assert len(worker.call("prepare_profile", seed=3)["outputs"]) == 2


def test_half_problem_has_a_float32_reference(worker, small):
    meta = worker.load(problem_path("matmul_fp16"))
    assert (meta["dtype"], meta["reference_dtype"]) == ("float16", "float32")
    assert meta["min_bytes"] == 3 * (8192 // SMALL) ** 2 * 2


def test_row_sum_counts_one_flop_per_input_element(worker, small):
    meta = worker.load(problem_path("row_sum"))
    rows, cols = 4096 // SMALL, 65536 // SMALL
    assert meta["flops"] == rows * cols
    assert meta["outputs"] == [{"kind": "tensor", "dtype": "float32", "shape": [rows]}]


def test_bf16_nt_matmul_flops(worker, small):
    meta = worker.load(problem_path("matmul_bf16_nt"))
    m, n, k = 4096 // SMALL, 8192 // SMALL, 2048 // SMALL
    assert meta["flops"] == 2 * m * n * k
    assert (meta["dtype"], meta["reference_dtype"]) == ("bfloat16", "float32")
    assert meta["inputs"][1]["shape"] == [n, k]


def test_load_names_the_device_and_torch(worker, small):
    meta = worker.load(problem_path("relu"))
    assert meta["gpu"] == "cpu"
    assert meta["torch_version"] == torch.__version__


def test_memory_estimate(worker, small):
    meta = worker.load(problem_path("split_halves"))
    rows, cols = 4096 // SMALL, 32768 // SMALL
    mem = meta["memory"]
    assert mem["slot_bytes"] == rows * cols * 4 + 2 * (2 * rows * cols // 2 * 4)  # input, two sets of two outputs
    assert mem["staged_bytes"] == rows * cols * 4
    assert mem["device_total_bytes"] >= mem["device_free_bytes"] > 0
    assert mem["check_workspace_bytes"] == 0  # measured on CUDA only


def test_init_inputs_are_named_and_constructor_defaults_stated(worker, small):
    # layernorm: get_init_inputs() = [hidden], bound to Model.__init__(self, hidden).
    meta = worker.load(problem_path("layernorm"))
    assert meta["init_inputs"] == [{"name": "hidden", "kind": "scalar", "dtype": "int64", "value": 8192 // SMALL}]
    assert worker.load(problem_path("relu"))["init_inputs"] == []


def test_init_inputs_describe_tuples_tensors_and_left_out_defaults(worker, tmp_path):
    path = tmp_path / "ln.py"
    path.write_text(
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n"
        "    def __init__(self, shape: tuple, scale, eps: float = 1e-5, *, affine=True):\n"
        "        super().__init__()\n"
        "        self.ln = nn.LayerNorm(shape, eps=eps, elementwise_affine=affine)\n"
        "        self.register_buffer('scale', scale)\n\n"
        "    def forward(self, x):\n"
        "        return self.ln(x) * self.scale\n\n"
        "def get_inputs():\n    return [torch.rand(4, 8)]\n\n"
        "def get_init_inputs():\n    return [(8,), torch.ones(8)]\n")
    meta = worker.load(str(path))
    assert meta["init_inputs"] == [
        {"name": "shape", "kind": "other", "value": "(8,)"},
        {"name": "scale", "kind": "tensor", "dtype": "float32", "shape": [8]},
        {"name": "eps", "kind": "scalar", "dtype": "float64", "value": 1e-5, "default": True},
        {"name": "affine", "kind": "scalar", "dtype": "bool", "value": True, "default": True},
    ]
