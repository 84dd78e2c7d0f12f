"""Comparison of outputs against the reference: the mismatch report and the precision policies.

An element is bad when |got - ref| > atol * scale + rtol * |ref| + abs_slack, `scale` being the
largest finite |ref| of that output, so values that cancel to near zero are judged against the
output's magnitude rather than their own. NaN/Inf where the reference is finite is always bad. An
output also fails when rel_l2_err = ||got - ref|| / ||ref|| exceeds rel_l2_limit: per-element bounds
loose enough for honest fp32 still let TF32 through on a few elements, the aggregate error does not.

**The yardstick is PyTorch's own error** (`with_torch_error`): on the same inputs and parameters,
PyTorch computing in the problem's dtype (TF32 off) is some distance from the reference; a kernel
may be at most TORCH_ERROR_FACTOR times as far (rel_l2_limit = max(policy floor, factor x torch's
rel-L2); abs_slack = factor x torch's largest element error). Measured on an H200 (4096^3 fp32 GEMM,
TF32 off): PyTorch (cuBLAS) 8.4e-7 on positive inputs, 1.15e-6 signed; a tiled CUDA-core kernel the
same; 3xTF32 5e-8; TF32 5.4e-6 on positive inputs (6.4x) and ~1000x on signed ones. So 5 passes
honest fp32 orders of summation with room and fails TF32 on such all-positive inputs too. (On the
CPU, MKL's blocked sums are 10x more accurate than a sequential one; the yardstick is whatever the
problem's device gives.) Near-zero outputs (cancellation) are judged on the scale of torch's own
rounding noise, which is the honest precision there.

Everything runs in float64, a chunk at a time: a KernelBench-sized output is 6 GiB in fp32, and
whole-tensor float64 temporaries of it would need several times that beside the shared buffers.
On a GPU the element test and the magnitude run as one Triton kernel each instead of ~25 eager operations
per chunk (fused_compare.py, unless CUTEGEN_COMPARE=torch): the same statistics, one read of each tensor.
"""
from dataclasses import dataclass

import torch

from . import buffers, fused_compare
from .errors import RequestError

# (atol, rtol, rel-L2 floor) per policy; the floor applies where PyTorch itself is (nearly) exact.
# The worker's one list of precision policies and its one default: the C++ side's are Precision and
# kDefaultPrecision (src/common/evaluation.h); python/tests/test_precision_lists.py ties them.
POLICIES = {"strict": (1e-4, 1e-4, 1e-6), "tf32": (1e-3, 1e-3, 2e-3), "bf16": (1e-2, 1e-2, 2e-2)}
DEFAULT_PRECISION = "strict"
TORCH_ERROR_FACTOR = 5.0
# Half-precision problems cannot be held to fp32 accuracy; these apply whatever the policy.
_HALF_PROBLEMS = {torch.float16: (1e-2, 1e-2, 2e-3), torch.bfloat16: (2e-2, 2e-2, 2e-2)}

FIRST_BAD_LIMIT = 8
CHUNK_ELEMENTS = 1 << 24  # 128 MiB per float64 temporary: the check workspace stays small


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    rel_l2_limit: float
    abs_slack: float = 0.0  # added to every element's bound: a multiple of torch's own largest error


def tolerance(policy: str, problem_dtype: torch.dtype, output_dtype: torch.dtype) -> Tolerance:
    if policy not in POLICIES:
        raise RequestError(f"unknown precision policy {policy!r}; expected one of {', '.join(POLICIES)}")
    if not output_dtype.is_floating_point:
        return Tolerance(0.0, 0.0, 0.0)  # integer and bool outputs must match exactly
    return Tolerance(*_HALF_PROBLEMS.get(problem_dtype, POLICIES[policy]))


def with_torch_error(tol: Tolerance, torch_report: dict) -> Tolerance:
    """`tol` widened to TORCH_ERROR_FACTOR times PyTorch's own error on the same inputs
    (`torch_report`: compare() of the native result against the reference). Exact outputs
    (integer, bool) stay exact."""
    if tol.rel_l2_limit == 0.0 and tol.atol == 0.0:
        return tol
    rel, worst = torch_report["rel_l2_err"], torch_report["max_abs_err"]
    rel = rel if rel == rel and rel != float("inf") else 0.0  # NaN/inf: torch itself broke down; no widening
    worst = worst if worst == worst and worst != float("inf") else 0.0
    return Tolerance(tol.atol, tol.rtol, max(tol.rel_l2_limit, TORCH_ERROR_FACTOR * rel),
                     TORCH_ERROR_FACTOR * worst)


def expected_values(ref: torch.Tensor, output_dtype: torch.dtype) -> torch.Tensor:
    """The reference as a correct kernel can write it: values beyond the output dtype's range become
    the infinity they round to (an fp16 GEMM on inputs scaled by 100 overflows; that is not the
    kernel's fault). Everything else keeps the reference's precision."""
    if not output_dtype.is_floating_point or not ref.is_floating_point():
        return ref
    if torch.finfo(output_dtype).max >= torch.finfo(ref.dtype).max:
        return ref
    rounded = ref.to(output_dtype)
    overflow = torch.isinf(rounded) & torch.isfinite(ref)
    if not bool(overflow.any()):
        return ref
    return torch.where(overflow, rounded.to(ref.dtype), ref)


def expected_scale_and_norm(ref: torch.Tensor, output_dtype: torch.dtype) -> tuple:
    """(expected_values(ref, output_dtype), its max_abs_finite, the sum of squares of its finite values): the
    scale is looked at first, and when no finite reference value reaches the output dtype's largest value
    nothing can overflow, so the reference is the expected values as it is -- sparing the rounded copy of a
    whole output that expected_values makes to find overflows (a sixth of a check's memory traffic on a 6 GB
    output, and it runs after every timed call). The norm comes from the same pass (a timed call's sampled
    rel-L2 is measured against it: audit.compare_samples)."""
    scale, norm = finite_magnitude(ref)
    if not output_dtype.is_floating_point or not ref.is_floating_point() or scale < torch.finfo(output_dtype).max:
        return ref, scale, norm
    expected = expected_values(ref, output_dtype)
    return (expected, *finite_magnitude(expected))


def expected_and_scale(ref: torch.Tensor, output_dtype: torch.dtype) -> tuple:
    """expected_scale_and_norm without the norm."""
    return expected_scale_and_norm(ref, output_dtype)[:2]


def finite_magnitude(ref: torch.Tensor, chunk: int = CHUNK_ELEMENTS) -> tuple:
    """(the largest finite |ref|, the sum of squares of ref's finite values), in one pass over it."""
    if fused_compare.engine_for(ref, ref) == "fused":
        return fused_compare.magnitude(ref.reshape(-1))
    best = total = None
    flat = as_numbers(ref).reshape(-1)
    for start in range(0, flat.numel(), chunk):
        part = flat[start:start + chunk].to(torch.float64)
        part = torch.where(torch.isfinite(part), part, 0.0)
        part_max, part_sq = part.abs().max(), (part * part).sum()
        best = part_max if best is None else torch.maximum(best, part_max)
        total = part_sq if total is None else total + part_sq
    if best is None:
        return 0.0, 0.0
    best, total = torch.stack([best, total]).tolist()  # the one host sync
    return best, total


def max_abs_finite(ref: torch.Tensor, chunk: int = CHUNK_ELEMENTS) -> float:
    """The `scale` of the element test: the largest finite |ref|."""
    return finite_magnitude(ref, chunk)[0]


def _unravel(flat_index: int, shape) -> list:
    index = []
    for size in reversed(list(shape)):
        index.append(flat_index % size if size else 0)
        flat_index = flat_index // size if size else 0
    return list(reversed(index))


def _masks(got, ref, tol, scale):
    """(bad, nonfinite_bad, diff, both_finite, got_nan, ref_nan) of one float64 chunk."""
    got_nan, ref_nan = torch.isnan(got), torch.isnan(ref)
    both_finite = torch.isfinite(got) & torch.isfinite(ref)
    diff = torch.where(both_finite, (got - ref).abs(), 0.0)
    bound = tol.atol * scale + tol.rtol * ref.abs() + tol.abs_slack
    same_nonfinite = (got_nan & ref_nan) | (~both_finite & (got == ref))
    nonfinite_bad = ~both_finite & ~same_nonfinite
    bad = (both_finite & (diff > bound)) | nonfinite_bad
    return bad, nonfinite_bad, diff, both_finite, got_nan, ref_nan


class _Accumulator:
    """Sums and maxima kept on the device as 0-d tensors, read back once in finish(): a host sync
    per statistic and chunk would leave the GPU idle most of the time on a multi-GiB output."""

    _COUNTS = ("bad", "nonfinite_bad", "unwritten", "nan", "inf")
    _SUMS = ("max_abs", "max_rel", "sum_sq_diff", "sum_sq_ref")

    def __init__(self):
        self._dev = None
        self.chunk_bad = []  # (start, bad count of the chunk): where to look for first_bad later
        for name in self._COUNTS:
            setattr(self, name, 0)
        for name in self._SUMS:
            setattr(self, name, 0.0)
        self.first_bad = []

    def add(self, got, ref, start, tol, scale, is_float, poisoned=None):
        if self._dev is None:
            self._dev = {name: torch.zeros((), dtype=torch.int64, device=got.device) for name in self._COUNTS}
            self._dev.update({name: torch.zeros((), dtype=torch.float64, device=got.device) for name in self._SUMS})
        d = self._dev
        bad, nonfinite_bad, diff, both_finite, got_nan, ref_nan = _masks(got, ref, tol, scale)
        chunk_bad = bad.sum()
        d["bad"] += chunk_bad
        self.chunk_bad.append((start, chunk_bad))
        d["nonfinite_bad"] += nonfinite_bad.sum()
        if is_float:
            d["unwritten"] += (got_nan & ~ref_nan).sum()
        elif poisoned is not None:  # an integer or bool element still holding the poison, where it is wrong
            d["unwritten"] += (poisoned & bad).sum()
        d["nan"] += got_nan.sum()
        d["inf"] += torch.isinf(got).sum()
        if diff.numel():
            d["max_abs"] = torch.maximum(d["max_abs"], diff.max())
            nonzero_ref = both_finite & (ref != 0)
            rel = torch.where(nonzero_ref, diff / ref.abs(), 0.0)  # 0/0 lanes are masked out here
            d["max_rel"] = torch.maximum(d["max_rel"], rel.max())
        d["sum_sq_diff"] += (diff * diff).sum()
        finite_ref = torch.where(torch.isfinite(ref), ref, 0.0)
        d["sum_sq_ref"] += (finite_ref * finite_ref).sum()

    def finish(self):
        if self._dev is None:
            return
        names = self._COUNTS + self._SUMS
        values = torch.stack([self._dev[n].to(torch.float64) for n in names]).tolist()
        for name, value in zip(names, values):
            setattr(self, name, int(value) if name in self._COUNTS else value)
        self.chunk_bad = [(start, int(n)) for start, n in zip((s for s, _ in self.chunk_bad),
                                                              torch.stack([n for _, n in self.chunk_bad]).tolist())]

    def note_first_bad(self, bad, got, ref, start, shape):
        need = FIRST_BAD_LIMIT - len(self.first_bad)
        for local in torch.nonzero(bad).reshape(-1)[:need].tolist():
            self.first_bad.append({"index": _unravel(start + local, shape),
                                   "got": float(got[local]), "expected": float(ref[local])})

    def rel_l2(self) -> float:
        if self.sum_sq_ref > 0:
            return (self.sum_sq_diff / self.sum_sq_ref) ** 0.5
        return 0.0 if self.sum_sq_diff == 0 else float("inf")


def as_numbers(t: torch.Tensor) -> torch.Tensor:
    """A bool output is read as its bytes: torch reads any non-zero byte as True, so a byte a kernel
    never writes for a bool -- the poison's (buffers.poison_) -- would pass where the answer is True; as
    a number (2..255) it differs from every 0/1 reference value."""
    return t.view(torch.uint8) if t.dtype == torch.bool else t


def _accumulate(got, ref, tol, scale, chunk, poison=None):
    if fused_compare.engine_for(got, ref) == "fused":
        return _accumulate_fused(got, ref, tol, scale)
    acc = _Accumulator()
    got_flat, ref_flat = as_numbers(got).reshape(-1), as_numbers(ref).reshape(-1)
    is_float = got.is_floating_point()

    for start in range(0, got.numel(), chunk):
        poisoned = None if is_float or poison is None else buffers.is_poison(got_flat[start:start + chunk], poison)
        acc.add(*_chunk_at(got_flat, ref_flat, start, chunk), start, tol, scale, is_float, poisoned)
    acc.finish()
    _note_first_bad(acc, got_flat, ref_flat, chunk, tol, scale, got.shape)
    return acc


def _chunk_at(got_flat, ref_flat, start, chunk):
    g = got_flat[start:start + chunk].to(torch.float64)
    return g, ref_flat[start:start + chunk].to(device=g.device, dtype=torch.float64)


def _note_first_bad(acc, got_flat, ref_flat, chunk, tol, scale, shape):
    """The first bad elements, for the mismatch report: a second look at the chunks (acc.chunk_bad: start, bad
    count) that have any, in order, until there are enough. Failures are the rare case; passing outputs skip this."""
    for start, count in acc.chunk_bad:
        if len(acc.first_bad) >= FIRST_BAD_LIMIT:
            break
        if count:
            g, r = _chunk_at(got_flat, ref_flat, start, chunk)
            acc.note_first_bad(_masks(g, r, tol, scale)[0], g, r, start, shape)


def _accumulate_fused(got, ref, tol, scale):
    """_accumulate's statistics from fused_compare's one pass (floating tensors on one GPU); the first bad
    elements, when there are any, from an eager second look at the blocks that have them."""
    acc = _Accumulator()
    got_flat, ref_flat = got.reshape(-1), ref.reshape(-1)
    counts, floats = fused_compare.compare_partials(got_flat, ref_flat, tol.atol * scale, tol.rtol, tol.abs_slack)
    per_count = counts.sum(dim=0).to(torch.float64)
    per_float = torch.stack([floats[:, 0].max(), floats[:, 1].max(), floats[:, 2].sum(), floats[:, 3].sum()])
    values = torch.cat([per_count, per_float]).tolist()  # the one host sync
    for name, value in zip(fused_compare.COUNTS, values):
        setattr(acc, name, int(value))
    for name, value in zip(fused_compare.FLOATS, values[len(fused_compare.COUNTS):]):
        setattr(acc, name, value)
    if acc.bad:
        # The blocks with bad elements, at most as many as the report lists, as the eager path's chunks.
        bad_blocks = torch.nonzero(counts[:, 0]).reshape(-1)[:FIRST_BAD_LIMIT]
        acc.chunk_bad = [(index * fused_compare.BLOCK, count)
                         for index, count in zip(bad_blocks.tolist(), counts[bad_blocks, 0].tolist())]
        _note_first_bad(acc, got_flat, ref_flat, fused_compare.BLOCK, tol, scale, got.shape)
    return acc


def compare(got: torch.Tensor, ref: torch.Tensor, tol: Tolerance, scale: float,
            chunk: int = CHUNK_ELEMENTS, poison: int = None) -> dict:
    """The mismatch report of one output (without its `index`), plus `pass`.

    `ref` may live on another device than `got` (host memory on a GPU machine). max_abs_err,
    max_rel_err and rel_l2_err cover the elements where both are finite; the others are counted
    in bad_count, unwritten_count, nan_count and inf_count. `unwritten_count`: for floating outputs,
    NaN where the reference is not; for integer and bool outputs, with `poison` (the output set's
    pattern), wrong elements that hold the poison's bits. A bool `got` holding a byte other than 0 or 1
    is wrong wherever it is (as_numbers)."""
    total = got.numel()
    acc = _accumulate(got, ref, tol, scale, chunk, poison)
    rel_l2 = acc.rel_l2()
    return {
        "max_abs_err": acc.max_abs, "max_rel_err": acc.max_rel, "rel_l2_err": rel_l2,
        "bad_count": acc.bad, "bad_fraction": acc.bad / total if total else 0.0, "total": total,
        "first_bad": acc.first_bad,
        "unwritten_count": acc.unwritten, "nan_count": acc.nan, "inf_count": acc.inf,
        "atol": tol.atol, "rtol": tol.rtol, "rel_l2_limit": tol.rel_l2_limit, "abs_slack": tol.abs_slack,
        "pass": acc.bad == 0 and rel_l2 <= tol.rel_l2_limit,
    }


def run_to_run(first: torch.Tensor, second: torch.Tensor, tol: Tolerance, scale: float,
               chunk: int = CHUNK_ELEMENTS):
    """(agree, max abs difference) of two runs on the same inputs, judged with the same tolerance.

    A NaN/Inf in one run where the other has something else counts as an infinite difference."""
    acc = _accumulate(second, first, tol, scale, chunk)
    agree = acc.bad == 0 and acc.rel_l2() <= tol.rel_l2_limit
    return agree, float("inf") if acc.nonfinite_bad else acc.max_abs


def mutated(current: torch.Tensor, pristine: torch.Tensor, chunk: int = CHUNK_ELEMENTS) -> bool:
    """True unless the same bits (a NaN that stays NaN is unchanged, -0 for +0 is a change): what
    "the kernel wrote into its input" means."""
    if current.shape != pristine.shape or current.dtype != pristine.dtype:
        return True
    a, b = current.contiguous().reshape(-1), pristine.contiguous().reshape(-1)
    for start in range(0, a.numel(), chunk):
        x = a[start:start + chunk].view(torch.uint8)
        y = b[start:start + chunk].to(x.device).view(torch.uint8)
        if not torch.equal(x, y):
            return True
    return False
