#!/usr/bin/env python3
"""The library convolution's TMA-im2col path (CIG_TMA 1, docs/library.md "Convolution") against its gather
kernel, on a machine with an NVIDIA GPU. For each problem: the seed cutegen writes (`cutegen seed`) with
`#define CIG_TMA 0` in front (the gather kernel), then with `#define CIG_TMA 1`; both judged by `cutegen eval --json` (strict). One line per
problem and path: verdict, the judge's median ms, speedup over eager and torch.compile. The variants are
compiled in parallel first (CUTLASS's SM90 convolution takes minutes of nvcc).

Usage: scripts/gpu_conv_tma.py --cutegen build-gpu/cutegen --out DIR [--tma-only] [--stop-after S] [--precision P]
                                [PROBLEM ...]
  (default problems: the project's dense forward and stride-1 transposed convolutions, then those in $KERNELBENCH_DIR's level 1
  given as KB:N, e.g. KB:63)
--tma-only judges only the TMA variants (the gather kernel's numbers are in benchmarks/results.md);
--stop-after S starts no evaluation after S seconds, so that one device call ends with its lines printed;
--precision P (tf32, bf16) seeds and judges under that policy (`cutegen seed --precision`, `cutegen eval --precision`:
the seed then sets CIG_PRECISION, docs/seed.md "Which precision").
Exit status: 0 when every TMA variant that was judged passed.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT = ["problems/conv2d_3x3.py", "problems/conv2d_bias_relu.py", "problems/conv1d_strided_dilated.py",
           "problems/conv2d_output_used_twice.py", "problems/conv3d_scale_tanh_sigmoid.py",
           "problems/conv_transpose1d_dilated.py", "problems/conv_transpose2d_stride1_padded.py",
           "problems/conv2d_bf16.py"]


def resolve(problem):
    if problem.startswith("KB:"):
        level1 = pathlib.Path(os.environ["KERNELBENCH_DIR"]) / "level1"
        matches = sorted(level1.glob(f"{problem[3:]}_*.py"))
        if not matches:
            sys.exit(f"no KernelBench level-1 problem {problem[3:]} under {level1}")
        return matches[0]
    return ROOT / problem


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=6, help="parallel compiles")
    ap.add_argument("--tma-only", action="store_true", help="judge only the CIG_TMA 1 variants")
    ap.add_argument("--stop-after", type=float, default=0, help="start no evaluation after this many seconds (0: none)")
    ap.add_argument("--precision", default="strict", choices=["strict", "tf32", "bf16"],
                    help="the policy both the seed and the judge use")
    ap.add_argument("problems", nargs="*")
    args = ap.parse_args()
    start = time.monotonic()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs = []  # (problem, kernel path, label)
    for name in args.problems or DEFAULT:
        problem = resolve(name)
        seed = out / f"{problem.stem}.cu"
        got = subprocess.run([args.cutegen, "seed", str(problem), "--out", str(seed), "--precision", args.precision],
                             capture_output=True, text=True)
        if got.returncode != 0:
            print(f"{problem.stem}: no seed: {got.stderr.strip().splitlines()[-1:]}")
            continue
        # The seed itself takes the TMA path where it fits the judge's cap (docs/seed.md, "Which path"): a define in
        # front of the knob's #ifndef pins each variant.
        gather, tma = out / f"{problem.stem}.gather.cu", out / f"{problem.stem}.tma.cu"
        gather.write_text("#define CIG_TMA 0\n" + seed.read_text())
        tma.write_text("#define CIG_TMA 1\n" + seed.read_text())
        pairs += ([] if args.tma_only else [(problem, gather, "gather")]) + [(problem, tma, "tma")]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        compiled = list(pool.map(lambda p: subprocess.run(["nice", "-n", "19", args.cutegen, "compile", str(p[1])],
                                                          capture_output=True, text=True), pairs))
    failed = False
    for (problem, kernel, label), c in zip(pairs, compiled):
        if args.stop_after and time.monotonic() - start > args.stop_after:
            print(f"stopped after {args.stop_after:.0f} s, before {problem.stem} {label}")
            break
        if c.returncode != 0:
            print(f"{problem.stem} {label}: COMPILE FAIL {c.stderr.strip()[-400:]}")
            failed |= label == "tma"
            continue
        report = kernel.with_suffix(".json")
        subprocess.run([args.cutegen, "eval", str(problem), str(kernel), "--json", str(report), "--precision",
                        args.precision],
                       capture_output=True, text=True, timeout=900)
        r = json.loads(report.read_text()) if report.exists() else {}
        t, s = r.get("time") or {}, r.get("speedup") or {}
        print(f"{problem.stem} {label}: {r.get('verdict', 'no report')} {t.get('median_ms')} ms, "
              f"vs eager {s.get('eager')}, vs compile {s.get('compile')} {(r.get('reason') or '')[:200]}", flush=True)
        failed |= label == "tma" and r.get("verdict") != "pass"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
