"""The full check's element test and the reference's magnitude in one pass over the GPU's memory (Triton).

compare.py states the test: per element, |got - ref| against atol * scale + rtol * |ref| + abs_slack in
float64, NaN/Inf where the reference differs always bad, and the whole output's rel-L2. Eagerly that is
about 25 PyTorch operations per 16 M-element chunk, each reading and writing float64 or bool temporaries
(~6 GB of traffic per chunk): on a KernelBench-size output (1.6 G elements, 100 chunks) one comparison moves
hundreds of GB, where the tensors themselves are 19 GB, and a full check makes four
(PyTorch's own result, both output sets, the two sets against each other). Here each is one kernel that
reads `got` and `ref` once and writes per-block partial sums, counts and maxima, which PyTorch then
reduces; the same statistics as compare._Accumulator, so the report and the verdict are the same.

Which engine runs is `CUTEGEN_COMPARE`: `fused` (the default since the GPU gave both engines the same reports,
benchmarks/results.md) or `torch` (the eager chunks). The fused one takes floating tensors on one CUDA device,
contiguous, of the same size; anything else (the CPU, integer and bool outputs, a reference in host
memory) goes the eager way whatever the switch says, and `engine_for` says which one ran. Triton's
interpreter takes CPU tensors only when a test asks for it by name (TRITON_INTERPRET=1 and CUTEGEN_COMPARE=fused):
the CPU test suites would otherwise interpret every comparison.

The per-element rules are written once more here, in Triton, and python/tests/test_fused_compare.py holds
them to compare.py's on every case of its table (Triton's interpreter on the CPU, natively on a GPU), and
builds both kernels for sm_90 with Triton's own compiler on any machine.
"""
import os

import torch

from .errors import RequestError

ENGINE_ENV = "CUTEGEN_COMPARE"
ENGINES = ("torch", "fused")
DEFAULT_ENGINE = "fused"
# Elements per program, and its warps: 8 values per thread, so the float64 temporaries stay in registers; the
# partials of a 1.6 G-element output are 0.8 M rows (56 MB).
BLOCK = 2048
NUM_WARPS = 8
# Launches pass enable_fp_fusion=False: each element's bound is then rounded as compare.py's eager operations
# round it (a multiply, then an add), not contracted into one FMA, so an element at its bound gets the same verdict.

# Partial rows: counts (int64) and sums/maxima (float64), in this order; compare._Accumulator's names.
COUNTS = ("bad", "nonfinite_bad", "unwritten", "nan", "inf")
FLOATS = ("max_abs", "max_rel", "sum_sq_diff", "sum_sq_ref")

_kernels = None


def engine() -> str:
    value = os.environ.get(ENGINE_ENV, DEFAULT_ENGINE)
    if value not in ENGINES:
        raise RequestError(f"{ENGINE_ENV}={value!r}: expected one of {', '.join(ENGINES)}")
    return value


def applies(got: torch.Tensor, ref: torch.Tensor) -> bool:
    """Whether the fused kernels can take this pair (see the module's doc)."""
    on_gpu = got.is_cuda or (_interpreting() and os.environ.get(ENGINE_ENV) == "fused")
    return on_gpu and got.device == ref.device and got.is_floating_point() and ref.is_floating_point() \
        and got.numel() == ref.numel() > 0 and got.is_contiguous() and ref.is_contiguous()


def engine_on(device: torch.device) -> str:
    """The engine a session on `device` runs for its floating outputs: what its record says."""
    probe = torch.empty(1, device=device)
    return engine_for(probe, probe)


def engine_for(got: torch.Tensor, ref: torch.Tensor) -> str:
    return "fused" if engine() == "fused" and applies(got, ref) else "torch"


def _interpreting() -> bool:
    """Triton's interpreter (TRITON_INTERPRET=1) runs the kernels on CPU tensors: how the CPU tests run them."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def _load():
    global _kernels
    if _kernels is None:
        _kernels = _build()
    return _kernels


def _build():
    try:
        import triton
        import triton.language as tl
    except ImportError as exc:
        raise RequestError(f"the fused comparison needs Triton, which this PyTorch cannot import ({exc}); install "
                           f"the Triton that matches it, or set {ENGINE_ENV}=torch for the eager comparison") from exc

    @triton.jit
    def compare_blocks(got_ptr, ref_ptr, bounds_ptr, counts_ptr, floats_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Lanes past the end read 0 against 0: finite, equal, counted nowhere.
        g = tl.load(got_ptr + offs, mask=inside, other=0.0).to(tl.float64)
        r = tl.load(ref_ptr + offs, mask=inside, other=0.0).to(tl.float64)
        atol_scale = tl.load(bounds_ptr)  # float64: a Python float argument would arrive as float32
        rtol = tl.load(bounds_ptr + 1)
        slack = tl.load(bounds_ptr + 2)
        g_nan = g != g
        r_nan = r != r
        # |x| < inf is false for NaN and for either infinity, and no algebraic rewrite can fold it away.
        g_fin = tl.abs(g) < float("inf")
        r_fin = tl.abs(r) < float("inf")
        both = g_fin & r_fin
        diff = tl.where(both, tl.abs(g - r), 0.0)
        bound = atol_scale + rtol * tl.abs(r) + slack
        same_nonfinite = (g_nan & r_nan) | ((both == 0) & (g == r))
        nonfinite_bad = (both == 0) & (same_nonfinite == 0)
        bad = (both & (diff > bound)) | nonfinite_bad
        rel = tl.where(both & (r != 0.0), diff / tl.where(r != 0.0, tl.abs(r), 1.0), 0.0)
        finite_ref = tl.where(r_fin, r, 0.0)
        base = pid.to(tl.int64) * 5
        tl.store(counts_ptr + base, tl.sum(bad.to(tl.int64), axis=0))
        tl.store(counts_ptr + base + 1, tl.sum(nonfinite_bad.to(tl.int64), axis=0))
        tl.store(counts_ptr + base + 2, tl.sum((g_nan & (r_nan == 0)).to(tl.int64), axis=0))
        tl.store(counts_ptr + base + 3, tl.sum(g_nan.to(tl.int64), axis=0))
        tl.store(counts_ptr + base + 4, tl.sum(((g_fin == 0) & (g_nan == 0)).to(tl.int64), axis=0))
        fbase = pid.to(tl.int64) * 4
        tl.store(floats_ptr + fbase, tl.max(diff, axis=0))
        tl.store(floats_ptr + fbase + 1, tl.max(rel, axis=0))
        tl.store(floats_ptr + fbase + 2, tl.sum(diff * diff, axis=0))
        tl.store(floats_ptr + fbase + 3, tl.sum(finite_ref * finite_ref, axis=0))

    @triton.jit
    def magnitude_blocks(ref_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        r = tl.load(ref_ptr + offs, mask=offs < n, other=0.0).to(tl.float64)
        r = tl.where(tl.abs(r) < float("inf"), r, 0.0)
        tl.store(out_ptr + pid.to(tl.int64) * 2, tl.max(tl.abs(r), axis=0))
        tl.store(out_ptr + pid.to(tl.int64) * 2 + 1, tl.sum(r * r, axis=0))

    return compare_blocks, magnitude_blocks


def compare_partials(got: torch.Tensor, ref: torch.Tensor, atol_scale: float, rtol: float, slack: float):
    """Per block of BLOCK elements: (counts [blocks, 5] int64, floats [blocks, 4] float64), rows as
    COUNTS and FLOATS name them."""
    compare_blocks, _ = _load()
    n = got.numel()
    blocks = (n + BLOCK - 1) // BLOCK
    counts = torch.empty((blocks, len(COUNTS)), dtype=torch.int64, device=got.device)
    floats = torch.empty((blocks, len(FLOATS)), dtype=torch.float64, device=got.device)
    bounds = torch.tensor([atol_scale, rtol, slack], dtype=torch.float64, device=got.device)
    compare_blocks[(blocks,)](got, ref, bounds, counts, floats, n, BLOCK=BLOCK, num_warps=NUM_WARPS,
                              enable_fp_fusion=False)
    return counts, floats


def magnitude(ref: torch.Tensor) -> tuple:
    """(the largest finite |ref|, the sum of squares of ref's finite values), as compare.finite_magnitude."""
    _, magnitude_blocks = _load()
    n = ref.numel()
    blocks = (n + BLOCK - 1) // BLOCK
    out = torch.empty((blocks, 2), dtype=torch.float64, device=ref.device)
    magnitude_blocks[(blocks,)](ref, out, n, BLOCK=BLOCK, num_warps=NUM_WARPS, enable_fp_fusion=False)
    best, total = torch.stack([out[:, 0].max(), out[:, 1].sum()]).tolist()  # the one host sync
    return best, total
