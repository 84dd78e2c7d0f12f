"""Per-trial inputs: the problem's own get_inputs() under a seed, then the trial kind's transform.

KernelBench inputs are mostly torch.rand in [0, 1), where identity passes ReLU and a kernel that
never handles negative values looks right. `signed` trials flip signs at random (rand becomes
uniform in (-1, 1)); `scaled` trials multiply by a large factor to expose overflow and absolute
tolerances that only work near 1. Integer and bool inputs (indices, masks) are never touched, and
neither are Python scalars.
"""
import torch

from . import problem_loader
from .errors import RequestError

TRIAL_KINDS = ("problem", "signed", "scaled")

# Keeps the sign stream independent of get_inputs()'s use of the global generator.
_SIGN_SEED_SALT = 0x5EED_516E


def timing_seed(base: int, index: int) -> int:
    return base + index


def generate(problem, seed: int, kind: str = "problem", scale: float = 1.0) -> list:
    values = problem_loader.call_get_inputs(problem.module, problem.path, seed, problem.device)
    return transform(values, kind, seed, scale)


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
    out = x.clone()  # keeps the input's strides when they are dense
    return out.mul_(signs)


def _scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x.clone().mul_(scale)
