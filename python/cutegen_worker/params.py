"""Per-call parameters and buffers: the problem's own, or fresh values drawn from a seed.

A kernel must compute from the parameters it is given. Run only with a model's initial values,
a LayerNorm that ignores its weight 1 / bias 0, or a kernel that caches something derived from
the weights on its first call, looks right. So every call but one trial gets parameters drawn
afresh, as a pure function of (the problem's own values, seed) so that the worker can draw them
again when it checks the call.

Rules per floating tensor (integer and bool buffers -- counters, masks, indices -- are kept):
* all elements equal to c (LayerNorm's weight 1 and bias 0, BatchNorm's fresh running stats):
  c > 0 becomes c * U(0.5, 1.5) per element, c < 0 likewise, c == 0 becomes U(-0.5, 0.5);
* all elements positive (variances, scales): each times U(0.5, 1.5), so they stay positive;
* otherwise: each times U(0.5, 1.5), plus N(0, 1) * 0.25 * rms, so signs and magnitudes mix.
The draws keep each tensor's order of magnitude, so the problem keeps its meaning (no variance
goes negative, no weight becomes huge).
"""
import torch

OWN = "own"
RANDOM = "random"
KINDS = (OWN, RANDOM)

_SALT = 0x9A2A_3E75  # keeps the parameter stream apart from get_inputs()' use of the same seed


def draw(originals: list, seed: int) -> list:
    """Fresh values for every tensor of `originals` (the model's parameters then buffers)."""
    out = []
    for index, p in enumerate(originals):
        if not p.is_floating_point() or p.numel() == 0:
            out.append(p)
            continue
        generator = torch.Generator(device=p.device)
        generator.manual_seed(((seed * 1_000_003 + index) ^ _SALT) & 0x7FFF_FFFF_FFFF_FFFF)
        out.append(_draw_one(p, generator))
    return out


def _uniform(like: torch.Tensor, low: float, high: float, generator) -> torch.Tensor:
    u = torch.rand(like.shape, generator=generator, device=like.device, dtype=torch.float32)
    return u * (high - low) + low


def _draw_one(p: torch.Tensor, generator) -> torch.Tensor:
    x = p.detach().to(torch.float32)
    first = x.reshape(-1)[0]
    if bool(torch.all(x == first)):
        c = float(first)
        value = _uniform(x, -0.5, 0.5, generator) if c == 0 else c * _uniform(x, 0.5, 1.5, generator)
    elif bool(torch.all(x > 0)):
        value = x * _uniform(x, 0.5, 1.5, generator)
    else:
        rms = float(x.square().mean().sqrt())
        noise = torch.randn(x.shape, generator=generator, device=x.device, dtype=torch.float32)
        value = x * _uniform(x, 0.5, 1.5, generator) + noise * (0.25 * rms)
    return value.to(p.dtype)


def values_for(originals: list, kind: str, seed: int) -> list:
    """The parameters of one call: the problem's own (`own`) or drawn from `seed` (`random`)."""
    return list(originals) if kind == OWN else draw(originals, seed)
