"""Per-trial inputs: the problem's own get_inputs() under a seed, then the trial kind's transform.

KernelBench inputs are mostly torch.rand in [0, 1), where identity passes ReLU and a kernel that
never handles negative values looks right. `signed` trials flip signs at random (rand becomes
uniform in (-1, 1)); `scaled` trials multiply by a large factor to expose overflow and absolute
tolerances that only work near 1. Integer and bool inputs (indices, masks) are never touched, and
neither are Python scalars.

Inputs are a pure function of (problem, seed, kind, scale): the worker keeps no pristine copies of
what it shares with the runner; it generates the inputs again when it checks a trial, compares the
shared buffers with them bit for bit (mutation) and computes the reference from them. `load`
verifies that get_inputs() really is reproducible.
"""
import sys

import torch

from . import compare, problem_loader
from .errors import ProblemError, RequestError

TRIAL_KINDS = ("problem", "signed", "scaled")

# Keeps the sign stream independent of get_inputs()'s use of the global generator.
_SIGN_SEED_SALT = 0x5EED_516E


class InputSource:
    """Generates a problem's forward inputs the same way every time."""

    def __init__(self, module, path: str, device: torch.device):
        self.module, self.path, self.device = module, path, device
        self.on_device = device.type != "cpu"

    def first(self, seed: int) -> list:
        """The load-time call: picks where factories run and proves the result is reproducible."""
        try:
            values = self.generate(seed)
        except ProblemError:
            if not self.on_device:
                raise
            # e.g. get_inputs() calls .numpy(): generate on the CPU and move, from now on.
            self.on_device = False
            values = self.generate(seed)
            print(f"cutegen-worker: {self.path}: get_inputs() fails under `with torch.device('{self.device}')`; "
                  "its inputs are generated on the CPU", file=sys.stderr)
        again = self.generate(seed)
        for i, (a, b) in enumerate(zip(values, again)):
            if not _same(a, b):
                raise ProblemError(
                    f"{self.path}: get_inputs() returned a different input {i} for the same seed; draw random "
                    "values from torch's, numpy's or Python's global generators (which the worker seeds), "
                    "not from the clock or a private generator")
        return values

    def generate(self, seed: int, kind: str = "problem", scale: float = 1.0) -> list:
        values = problem_loader.call_get_inputs(self.module, self.path, seed, self.device, self.on_device)
        return transform(values, kind, seed, scale)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return not compare.mutated(a, b)
    return type(a) is type(b) and a == b


def transform(values: list, kind: str, seed: int, scale: float = 1.0) -> list:
    if kind == "problem":
        return values
    if kind == "signed":
        return [_signed(v, seed, i) if _is_float_tensor(v) else v for i, v in enumerate(values)]
    if kind == "scaled":
        return [_scaled(v, scale) if _is_float_tensor(v) else v for v in values]
    raise RequestError(f"unknown trial kind {kind!r}; expected one of {', '.join(TRIAL_KINDS)}")


def _is_float_tensor(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _signed(x: torch.Tensor, seed: int, index: int) -> torch.Tensor:
    generator = torch.Generator(device=x.device)
    generator.manual_seed(((seed * 1_000_003 + index) ^ _SIGN_SEED_SALT) & 0x7FFF_FFFF_FFFF_FFFF)
    bits = torch.randint(0, 2, x.shape, generator=generator, device=x.device, dtype=torch.int8)
    signs = (bits * 2 - 1).to(x.dtype)  # +-1: multiplying by it is exact
    # Never in place (get_inputs() may return a tensor the module keeps); empty_like keeps x's strides.
    return torch.mul(x, signs, out=torch.empty_like(x))


def _scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.mul(x, scale, out=torch.empty_like(x))
