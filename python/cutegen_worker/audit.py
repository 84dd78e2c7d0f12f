"""Secret positions, and reading them from the shared buffers right after a call.

The worker picks, once per session, up to POSITIONS element positions of every output and every
input tensor, from os.urandom: they never leave this process, so the candidate cannot compute
"just those" first. Right after each call returns, `gather` reads them with the worker's own CUDA
context (one index_select per tensor and one copy to the host). What is read then is what the
call left: if the candidate answered before its work was done, the positions still hold the NaN
poison -- or the GPU makes the gather wait for the candidate's work, and the wait is charged to the
call (candidate_session.py).
"""
import os

import torch

from . import buffers, compare

POSITIONS = 2048


class SecretPositions:
    def __init__(self, tensors: list, device: torch.device, count: int = POSITIONS):
        seed = int.from_bytes(os.urandom(8), "little") & 0x7FFF_FFFF_FFFF_FFFF
        generator = torch.Generator().manual_seed(seed)
        self._flat = []
        for t in tensors:
            n = t.numel() if t is not None else 0
            if n == 0:
                self._flat.append(None)
                continue
            k = min(count, n)
            # Distinct positions, sorted (friendlier memory access); a permutation prefix is cheap below
            # a few million elements, random draws with replacement are fine above.
            flat = torch.randperm(n, generator=generator)[:k] if n <= (1 << 22) else \
                torch.randint(0, n, (k,), generator=generator)
            self._flat.append(torch.sort(flat).values.to(device))

    def gather(self, tensors: list) -> list:
        """The values at the secret positions of each tensor (host tensors; None for no tensor)."""
        picked = []
        for t, flat in zip(tensors, self._flat):
            if t is None or flat is None:
                picked.append(None)
            elif t.is_contiguous():
                picked.append(t.reshape(-1).index_select(0, flat))
            else:
                picked.append(t[torch.unravel_index(flat, t.shape)])
        return [p.cpu() if p is not None else None for p in picked]  # one synchronisation, at the end

    def positions(self, index: int):
        return self._flat[index]


def poison_left(values: torch.Tensor, pattern: int) -> int:
    """How many gathered output values still hold the poison: the output set's fill, bit for bit
    (buffers.output_pattern). A NaN the kernel computed is not the poison -- a correct output may be NaN."""
    if values.dtype == torch.bool:
        return 0  # every bool byte pattern the poison leaves reads as True; nothing to tell apart
    return int(buffers.is_poison(values, pattern).sum())


def compare_samples(got: torch.Tensor, ref_full: torch.Tensor, positions: torch.Tensor, tol: compare.Tolerance,
                    scale: float) -> dict:
    """The compare() report of the gathered values against the reference at the same positions.
    The rel-L2 of 2048 samples estimates the whole output's within a few percent; the limit gets
    50 % room for that estimate."""
    ref = ref_full.reshape(-1).index_select(0, positions.to(ref_full.device)).cpu()
    loose = compare.Tolerance(tol.atol, tol.rtol, tol.rel_l2_limit * 1.5, tol.abs_slack)
    return compare.compare(got.reshape(-1), ref, loose, scale)


def inputs_changed(got: list, pristine: list, secret: "SecretPositions", first_index: int = 0) -> list:
    """Indices of the tensors whose gathered values differ bit for bit from the pristine ones."""
    changed = []
    for i, (values, original) in enumerate(zip(got, pristine)):
        if values is None or not isinstance(original, torch.Tensor):
            continue
        flat = secret.positions(first_index + i)
        if original.is_contiguous():
            want = original.reshape(-1).index_select(0, flat.to(original.device))
        else:
            want = original[torch.unravel_index(flat.to(original.device), original.shape)]
        if compare.mutated(values, want.cpu()):
            changed.append(i)
    return changed
