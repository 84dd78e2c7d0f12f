"""Per-seed input generation and the signed/scaled trial transforms."""
import pytest
import torch

from conftest import problem_path, write_problem
from cutegen_worker import inputs

MIXED = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, idx, mask, k: int):
        return x[idx] * mask[idx] * k


def get_inputs():
    return [torch.rand(16, 8), torch.randint(0, 16, (5,)), torch.rand(16, 1) > 0.5, 3]


def get_init_inputs():
    return []
'''


def generate(worker, seed, kind="problem", scale=1.0):
    return worker.session.problem.source.generate(seed, kind, scale)


def test_same_seed_same_inputs_other_seed_other_inputs(worker, small):
    worker.load(problem_path("matmul_square"))
    for kind in ("problem", "signed", "scaled"):
        a, b = generate(worker, 11, kind, 10.0), generate(worker, 11, kind, 10.0)
        assert all(torch.equal(x, y) for x, y in zip(a, b))
        c = generate(worker, 12, kind, 10.0)
        assert not torch.equal(a[0], c[0])


def test_signed_flips_signs_of_rand_inputs_and_nothing_else(worker, small):
    worker.load(problem_path("relu"))
    (plain,), (signed,) = generate(worker, 5), generate(worker, 5, "signed")
    assert plain.min() >= 0  # KernelBench's torch.rand: [0, 1)
    assert (signed < 0).float().mean() > 0.4 and (signed > 0).float().mean() > 0.4
    assert torch.equal(signed.abs(), plain)  # x * sign, magnitudes kept


def test_scaled_multiplies_floating_inputs(worker, small):
    worker.load(problem_path("relu"))
    (plain,), (scaled,) = generate(worker, 5), generate(worker, 5, "scaled", 100.0)
    assert torch.equal(scaled, plain * 100.0)


def test_integer_bool_and_scalar_inputs_are_left_alone(worker, tmp_path):
    worker.load(write_problem(tmp_path, MIXED))
    plain, signed, scaled = generate(worker, 9), generate(worker, 9, "signed"), generate(worker, 9, "scaled", 1e3)
    for other in (signed, scaled):
        assert torch.equal(other[1], plain[1]) and other[1].dtype == torch.int64
        assert torch.equal(other[2], plain[2]) and other[2].dtype == torch.bool
        assert other[3] == 3
        assert not torch.equal(other[0], plain[0])


def test_staging_writes_the_seeds_inputs_and_poisons_the_outputs(worker, small):
    from cutegen_worker.shared_buffers import SharedArena
    from cutegen_worker.staging import CallSpec, Slot
    worker.load(problem_path("relu"))
    problem = worker.session.problem
    slot = Slot(SharedArena(problem.device), problem)
    for spec in (CallSpec(101), CallSpec(102, "signed"), CallSpec(103, "scaled", 100.0)):
        for outs in slot.outputs:
            outs[0].zero_()
        staged = slot.stage(problem, spec)
        assert torch.equal(slot.inputs[0], generate(worker, spec.seed, spec.kind, spec.scale)[0])
        assert torch.equal(staged.inputs[0], slot.inputs[0])
        assert all(torch.isnan(outs[0]).all() for outs in slot.outputs)
        again = slot.regenerate(problem, spec)
        assert torch.equal(again.inputs[0], staged.inputs[0])


def test_get_inputs_drawing_from_numpy_and_random_is_reproducible(worker, tmp_path):
    text = MIXED.replace("def get_inputs():\n    return [", "def get_inputs():\n    import random, numpy\n"
                         "    k = random.randint(1, 9) + int(numpy.random.randint(0, 5))\n    return [")
    text = text.replace(", 3]", ", k]")
    worker.load(write_problem(tmp_path, text))
    assert generate(worker, 4)[3] == generate(worker, 4)[3]


def test_get_inputs_that_is_not_reproducible_is_a_problem_error(worker, tmp_path):
    text = MIXED.replace("torch.rand(16, 8)", "torch.rand(16, 8, generator=torch.Generator().manual_seed(_n()))")
    text = text.replace("def get_inputs():", "_calls = []\n\n\ndef _n():\n    _calls.append(1)\n    return len(_calls)\n\n\n"
                        "def get_inputs():")
    response = worker.raw("load", problem=write_problem(tmp_path, text), device="cpu", seed=0)
    assert (response["ok"], response["kind"]) == (False, "problem")
    assert "get_inputs() returned a different input 0 for the same seed" in response["error"]


def test_transforms_never_write_into_what_get_inputs_returned():
    kept = torch.rand(4, 4)
    before = kept.clone()
    inputs.transform([kept], "signed", 1)
    inputs.transform([kept], "scaled", 1, 10.0)
    assert torch.equal(kept, before)


def test_transforms_keep_strides():
    x = torch.rand(8, 4).t()
    assert inputs.transform([x], "signed", 3)[0].stride() == x.stride()
    assert inputs.transform([x], "scaled", 3, 2.0)[0].stride() == x.stride()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_signed_is_exact_in_every_floating_dtype(dtype):
    # The signs are one byte each, cast by the multiply as it reads them (inputs._signed): every element is
    # the input or its negation bit for bit -- infinities, NaN and signed zeros included -- in the input's dtype.
    x = torch.cat([torch.randn(4093, dtype=torch.float64) * 1e3, torch.tensor([0.0, -0.0, float("inf"), float("nan")],
                                                                              dtype=torch.float64)]).to(dtype)
    y = inputs.transform([x], "signed", 11)[0]
    assert y.dtype == dtype
    bits = torch.tensor([], dtype={2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()])
    xi, yi, sign = x.view(bits.dtype), y.view(bits.dtype), torch.tensor(1, dtype=bits.dtype) << (8 * x.element_size() - 1)
    flipped = (xi ^ sign) == yi
    assert bool(((xi == yi) | flipped).all())
    assert 0.4 < flipped.float().mean() < 0.6
