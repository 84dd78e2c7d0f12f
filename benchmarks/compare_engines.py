#!/usr/bin/env python3
"""The full check's element test under each engine (python/cutegen_worker/fused_compare.py), on a GPU: wall time of
compare.compare and compare.finite_magnitude on a KernelBench-size output (default 4096 x 393216 fp32 against its
float64 reference, KernelBench 23's), and whether both engines give the same report. One line per engine.

Usage: python3 benchmarks/compare_engines.py [--elements N] [--reps R]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

from cutegen_worker import compare, fused_compare  # noqa: E402


def timed(fn, reps):
    fn()  # the first call compiles the Triton kernels
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--elements", type=int, default=4096 * 393216)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("compare_engines: no CUDA device", file=sys.stderr)
        return 1
    ref = torch.randn(args.elements, dtype=torch.float64, device="cuda")
    got = (ref * (1 + 1e-7 * torch.randn_like(ref))).float()
    got[12345] = float("nan")  # one bad element: the report's first_bad path runs too
    tol = compare.Tolerance(1e-4, 1e-4, 1e-6)
    reports = {}
    for engine in fused_compare.ENGINES:
        os.environ[fused_compare.ENGINE_ENV] = engine
        scale_s, (scale, _) = timed(lambda: compare.finite_magnitude(ref), args.reps)
        cmp_s, report = timed(lambda: compare.compare(got, ref, tol, scale), args.reps)
        reports[engine] = report
        moved = got.numel() * (got.element_size() + ref.element_size())
        print(f"{engine:6s} compare {cmp_s * 1e3:9.2f} ms ({moved / cmp_s / 1e9:7.1f} GB/s of got+ref), "
              f"magnitude {scale_s * 1e3:8.2f} ms; bad {report['bad_count']}, rel-L2 {report['rel_l2_err']:.6e}")
    a, b = reports["torch"], reports["fused"]
    same = all(a[k] == b[k] for k in ("bad_count", "unwritten_count", "nan_count", "inf_count", "pass")) and \
        abs(a["rel_l2_err"] - b["rel_l2_err"]) <= 1e-9 * max(a["rel_l2_err"], 1e-300)
    print("same report" if same else f"REPORTS DIFFER: {a} vs {b}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
