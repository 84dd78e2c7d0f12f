"""Each way a problem file can be wrong gives ONE `problem` error naming the file, the line where
there is one, and what to do; the worker keeps serving afterwards."""
import textwrap

import pytest
import torch

from conftest import write_problem

GOOD_TAIL = '''
def get_inputs():
    return [torch.rand(4, 4)]


def get_init_inputs():
    return []
'''

GOOD_MODEL = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2
'''


def load_error(worker, path):
    response = worker.raw("load", problem=path, device="cpu", seed=0)
    assert response["ok"] is False, response
    assert response["kind"] == "problem", response
    assert set(response) == {"id", "ok", "error", "kind"}
    assert path in response["error"]
    return response["error"]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_syntax_error_names_the_line(worker, tmp_path):
    text = GOOD_MODEL.replace("def forward(self, x):", "def forward(self, x)") + GOOD_TAIL
    path = write_problem(tmp_path, text)
    error = load_error(worker, path)
    assert f"{path}:{line_of(text, 'def forward')}:" in error
    assert "syntax error" in error


def test_missing_get_inputs(worker, tmp_path):
    path = write_problem(tmp_path, GOOD_MODEL + "\ndef get_init_inputs():\n    return []\n")
    assert load_error(worker, path) == (
        f"{path}: get_inputs() is missing; define get_inputs() returning a list of inputs")


def test_missing_get_init_inputs(worker, tmp_path):
    path = write_problem(tmp_path, GOOD_MODEL + "\ndef get_inputs():\n    return [torch.rand(4)]\n")
    error = load_error(worker, path)
    assert "get_init_inputs() is missing" in error and "[] when there are none" in error


def test_missing_model(worker, tmp_path):
    path = write_problem(tmp_path, "import torch\n" + GOOD_TAIL)
    assert "class Model is missing" in load_error(worker, path)


def test_model_that_is_not_a_module(worker, tmp_path):
    path = write_problem(tmp_path, "import torch\n\nclass Model:\n    pass\n" + GOOD_TAIL)
    assert "not a subclass of torch.nn.Module" in load_error(worker, path)


@pytest.mark.parametrize("result, type_name", [("x.sum().item()", "float"), ("{'y': x}", "dict"),
                                                ("(x, 3)", "int")])
def test_output_that_is_not_a_tensor(worker, tmp_path, result, type_name):
    path = write_problem(tmp_path, GOOD_MODEL.replace("return x * 2", f"return {result}") + GOOD_TAIL)
    error = load_error(worker, path)
    assert f"forward() returned a {type_name} as output" in error
    assert "return a tensor or a tuple/list of tensors" in error


def test_exception_in_init_names_type_message_and_line(worker, tmp_path):
    text = GOOD_MODEL.replace(
        "class Model(nn.Module):\n",
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        raise ValueError('hidden size must be even')\n\n") + GOOD_TAIL
    path = write_problem(tmp_path, text)
    error = load_error(worker, path)
    assert f"{path}:{line_of(text, 'raise ValueError')}:" in error
    assert "Model.__init__ raised ValueError: hidden size must be even" in error


def test_exception_in_forward_names_the_line_in_the_problem_file(worker, tmp_path):
    text = GOOD_MODEL.replace("return x * 2", "return x @ torch.rand(5, 5)") + GOOD_TAIL
    path = write_problem(tmp_path, text)
    error = load_error(worker, path)
    assert f"{path}:{line_of(text, 'return x @')}:" in error
    assert "forward() raised RuntimeError" in error
    assert "`return x @ torch.rand(5, 5)`" in error


def test_exception_at_import(worker, tmp_path):
    text = GOOD_MODEL + "\nbatch_size = undefined_constant * 2\n" + GOOD_TAIL
    path = write_problem(tmp_path, text)
    error = load_error(worker, path)
    assert f"{path}:{line_of(text, 'undefined_constant')}:" in error
    assert "importing the file raised NameError" in error


def test_exception_in_get_inputs(worker, tmp_path):
    text = GOOD_MODEL + "\ndef get_inputs():\n    raise KeyError('dim')\n\ndef get_init_inputs():\n    return []\n"
    path = write_problem(tmp_path, text)
    error = load_error(worker, path)
    assert f"{path}:{line_of(text, 'raise KeyError')}:" in error and "get_inputs() raised KeyError" in error


def test_get_inputs_returning_a_tensor_instead_of_a_list(worker, tmp_path):
    text = GOOD_MODEL + "\ndef get_inputs():\n    return torch.rand(4)\n\ndef get_init_inputs():\n    return []\n"
    assert "get_inputs() returned a Tensor; it must return a list" in load_error(worker, write_problem(tmp_path, text))


def test_unsupported_forward_argument(worker, tmp_path):
    text = GOOD_MODEL + "\ndef get_inputs():\n    return ['relu']\n\ndef get_init_inputs():\n    return []\n"
    assert "get_inputs() item 0 is a str" in load_error(worker, write_problem(tmp_path, text))


def test_unsupported_dtype(worker, tmp_path):
    text = GOOD_MODEL.replace("return x * 2", "return x.to(torch.complex64)") + GOOD_TAIL
    assert "not supported by the kernel contract" in load_error(worker, write_problem(tmp_path, text))


def test_missing_file(worker, tmp_path):
    assert "no such file" in load_error(worker, str(tmp_path / "absent.py"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_requested_but_unavailable(worker, tmp_path):
    path = write_problem(tmp_path, GOOD_MODEL + GOOD_TAIL)
    response = worker.raw("load", problem=path, device="cuda", seed=0)
    assert (response["ok"], response["kind"]) == (False, "problem")
    assert "CUDA was requested" in response["error"]


def test_worker_keeps_serving_after_a_bad_file(worker, tmp_path):
    load_error(worker, write_problem(tmp_path, "import torch\n" + GOOD_TAIL, "bad.py"))
    response = worker.raw("time_baselines", modes=["eager"], runs=1)
    assert (response["ok"], response["kind"]) == (False, "request")  # nothing is loaded now
    meta = worker.load(write_problem(tmp_path, textwrap.dedent(GOOD_MODEL) + GOOD_TAIL, "good.py"))
    assert meta["outputs"] == [{"kind": "tensor", "dtype": "float32", "shape": [4, 4]}]


def test_output_shape_that_depends_on_the_input_values(worker, tmp_path):
    text = GOOD_MODEL.replace("return x * 2", "return x[x > 0.5]") + GOOD_TAIL
    worker.load(write_problem(tmp_path, text))
    response = worker.raw("evaluate_candidate", runner=["r"], library="l", trials=[{"seed": s} for s in range(1, 6)],
                          warmup=0, runs=0, call_timeout_s=5.0, work_dir=str(tmp_path),
                          fake_runner={"mode": "reference"})
    assert (response["ok"], response["kind"]) == (False, "problem"), "some seed must give another number of elements"
    assert "output shapes must not depend on input values" in response["error"]
    # ... and which of the judge's steps the problem's code failed in (an out-of-memory error names it too)
    assert response["error"].endswith(" inputs))"), response["error"]
    assert "(the judge was at: trial " in response["error"], response["error"]


RANDOM_FORWARD = """
import torch
class Model(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.drop = torch.nn.Dropout(p)
    def forward(self, x):
        return self.drop(x) * 2
def get_inputs():
    return [torch.rand(8, 8)]
def get_init_inputs():
    return [P]
"""


def test_a_random_forward_cannot_be_verified_and_is_refused_at_load(worker, tmp_path):
    message = load_error(worker, write_problem(tmp_path, RANDOM_FORWARD.replace("P", "0.5")))
    assert "different output 0 for the same inputs" in message and "self.eval()" in message


def test_a_random_op_whose_effect_cancels_out_is_accepted(worker, tmp_path):
    """Dropout with p=0 (or a draw a later op removes) does not make the output random."""
    meta = worker.load(write_problem(tmp_path, RANDOM_FORWARD.replace("P", "0.0")))
    assert meta["outputs"][0]["shape"] == [8, 8]
