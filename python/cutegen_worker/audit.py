"""Secret positions, and reading them from the shared buffers right after a call.

Before each call the worker picks up to POSITIONS element positions of every output and every input
tensor, from os.urandom: they never leave this process, so the candidate cannot compute "just those"
first, and fresh ones every call leave nothing to learn from one call for the next. Right after the
call returns, `gather` reads them with the worker's own CUDA context (one index_select per tensor and
one copy to the host). What is read then is what the call left: if the candidate answered before its
work was done, the positions still hold the poison -- or the GPU makes the gather wait for the
candidate's work, and the wait is charged to the call (candidate_session.py). Every timed call's
gathered output values are then compared with the reference at the same positions.
"""
import os

import torch

from . import buffers, compare

POSITIONS = 2048
# Timed calls whose outputs are checked in full, chosen before the loop and never observable from the
# candidate's process (candidate_session.py): every call's outputs are copied into a private buffer of the
# same size, these calls' into buffers kept for the check after the loop.
FULL_AUDITS = 2
# Below this many elements per position drawn, distinct positions come from a permutation prefix;
# above it, from random draws with the repeats removed (a permutation of millions of elements on the
# host, per call, would cost tens of milliseconds).
_PERMUTATION_FACTOR = 8


def _distinct_sorted(n: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """k distinct positions in [0, n), sorted (friendlier memory access), uniformly chosen."""
    if n <= _PERMUTATION_FACTOR * k:
        return torch.sort(torch.randperm(n, generator=generator)[:k]).values
    chosen = torch.empty(0, dtype=torch.int64)
    while chosen.numel() < k:
        draw = torch.randint(0, n, (k + k // 4,), generator=generator)
        chosen = torch.unique(torch.cat([chosen, draw]))
    # unique() sorted them: keep a random k of them, not the smallest.
    keep = torch.randperm(chosen.numel(), generator=generator)[:k]
    return torch.sort(chosen[keep]).values


class SecretPositions:
    """Positions of one call (candidate_session draws a new set for every call)."""

    def __init__(self, tensors: list, device: torch.device, count: int = POSITIONS):
        seed = int.from_bytes(os.urandom(8), "little") & 0x7FFF_FFFF_FFFF_FFFF
        generator = torch.Generator().manual_seed(seed)
        self._flat = []
        for t in tensors:
            n = t.numel() if t is not None else 0
            if n == 0:
                self._flat.append(None)
                continue
            self._flat.append(_distinct_sorted(n, min(count, n), generator).to(device))

    def gather(self, tensors: list) -> list:
        """The values at the secret positions of each tensor (host tensors; None for no tensor). A bool
        tensor is read as its bytes (compare.as_numbers): its poison is a byte no bool holds."""
        picked = []
        for t, flat in zip(tensors, self._flat):
            if t is None or flat is None:
                picked.append(None)
            elif t.is_contiguous():
                picked.append(compare.as_numbers(t).reshape(-1).index_select(0, flat))
            else:
                picked.append(compare.as_numbers(t)[torch.unravel_index(flat, t.shape)])
        return [p.cpu() if p is not None else None for p in picked]  # one synchronisation, at the end

    def positions(self, index: int):
        return self._flat[index]


def poison_left(values: torch.Tensor, pattern: int, dtype: torch.dtype) -> int:
    """How many gathered values of an output of `dtype` still hold the poison, where that proves the
    element unwritten: floating outputs (a NaN of bits no kernel computes: a correct output may be NaN,
    never these bits) and bool outputs (a byte that is neither 0 nor 1), each bit for bit. An integer
    output has no value outside its valid set -- a correct answer may equal the poison -- so it is
    judged by the comparison with the reference that follows every timed call."""
    if not (dtype.is_floating_point or dtype == torch.bool):
        return 0
    return int(buffers.is_poison(values, pattern).sum())


def compare_samples(got: torch.Tensor, ref_full: torch.Tensor, positions: torch.Tensor, tol: compare.Tolerance,
                    scale: float, poison: int = None, ref_sq_sum: float = None) -> dict:
    """The compare() report of the gathered values against the reference at the same positions, its rel-L2
    an estimate of the whole output's: the squared error at the positions, scaled to the whole output, over
    the whole reference's squared norm (`ref_sq_sum`, compare.finite_magnitude's second value; without it, the
    samples' own ratio). The limit gets 50 % room for the estimate.

    Why not the samples' own ratio: where an output's magnitude sits in a few elements -- a softmax over
    100003 logits of randn x 30 -- 2048 random positions almost never hold them, and the ratio is the
    relative error of the small values alone, a statistic the full check never makes. An honest softmax
    whose exp is 1e-6 off at x - max = -25 (__expf) failed one timed call in 25-50 that way on an H100
    (2026-12-05), every element within its bound and the full rel-L2 far under its limit. Every element is
    still held to its own bound (atol against the output's scale, rtol against itself) as before."""
    return compare_sampled(got, sample(ref_full, positions), ref_full.numel(), tol, scale, poison, ref_sq_sum)


def sample(full: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """The values of `full` at `positions` (flat), on the host: all a sampled comparison needs of a whole tensor
    besides its scale and norm -- so the tensor itself can be released before the next large one is made
    (candidate_session._compare_call)."""
    return compare.as_numbers(full).reshape(-1).index_select(0, positions.to(full.device)).cpu()


def compare_sampled(got: torch.Tensor, ref: torch.Tensor, total: int, tol: compare.Tolerance, scale: float,
                    poison: int = None, ref_sq_sum: float = None) -> dict:
    """compare_samples from the reference's values already taken at the positions (`sample`) and its element
    count `total`: the same report, bit for bit."""
    loose = compare.Tolerance(tol.atol, tol.rtol, tol.rel_l2_limit * 1.5, tol.abs_slack)
    report = compare.compare(got.reshape(-1), ref, loose, scale, poison=poison)
    if ref_sq_sum is None or not got.is_floating_point():
        return report
    # Non-finite mismatches are bad elements already (compare); the estimate is over the finite pairs.
    g, r = got.reshape(-1).to(torch.float64), ref.to(torch.float64)
    sq_diff = float(torch.where(torch.isfinite(g) & torch.isfinite(r), g - r, 0.0).square().sum())
    scaled = sq_diff * total / max(1, ref.numel())
    estimate = (scaled / ref_sq_sum) ** 0.5 if ref_sq_sum > 0 else (0.0 if scaled == 0 else float("inf"))
    report["sample_rel_l2_err"] = report["rel_l2_err"]
    report["rel_l2_err"] = estimate
    report["pass"] = report["bad_count"] == 0 and estimate <= loose.rel_l2_limit
    return report


def inputs_changed(got: list, pristine: list, secret: "SecretPositions", first_index: int = 0) -> list:
    """Indices of the tensors whose gathered values differ bit for bit from the pristine ones."""
    changed = []
    for i, (values, original) in enumerate(zip(got, pristine)):
        if values is None or not isinstance(original, torch.Tensor):
            continue
        flat = secret.positions(first_index + i)
        source = compare.as_numbers(original)
        if original.is_contiguous():
            want = source.reshape(-1).index_select(0, flat.to(original.device))
        else:
            want = source[torch.unravel_index(flat.to(original.device), original.shape)]
        if compare.mutated(values, want.cpu()):
            changed.append(i)
    return changed
