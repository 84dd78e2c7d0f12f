#!/usr/bin/env python3
"""A seed's knob values against each other on a machine with an NVIDIA GPU: the A/B behind a seed default.

For each PROBLEM: the kernel `cutegen seed` writes, and one copy of it per variant with the variant's `#define`s in
front (each knob's `#ifndef` then takes the variant's value); the copies compiled in parallel (CUTLASS kernels take
a minute of nvcc each) while the GPU judges the problems already built: ONE `cutegen eval PROBLEM COPIES...` per problem, so eager PyTorch and torch.compile
are timed once and every variant is judged on the same card in the same worker. One line per problem and variant:
verdict, the judge's median ms, speedup over eager and torch.compile, SOL, and ptxas's performance notes if the
build had any (a serialised wgmma is a result too); then, per variant judged on two or more problems, how many
passed and the geometric mean of their speedups. Everything is also written to OUT/ab.json.

Usage: scripts/gpu_knob_ab.py --cutegen CUTEGEN --out DIR [--variant NAME=K=V[,K=V...]]... [--precision P]
                              [--runs N] [--trials N] [--jobs N] [--stop-after S] PROBLEM[:NAME[,NAME...]] ...
  --variant seed=        the seed as written (no defines); given no --variant at all, that is the only one
  --variant pair=CIG_TMA_PAIRED=1,CIG_TMA_STAGES=4
  PROBLEM                a problem file, or KB:N / KB2:N for KernelBench level 1 / 2 task N under $KERNELBENCH_DIR;
                         ":a,b" after it judges only those variants there (default: every variant)
  --stop-after S         start no problem's evaluation after S seconds (one device call then ends with its lines)
Exit status: 0 every variant judged passed; 1 a variant failed, did not build or had no seed; 2 bad arguments.
Example (the conv path choice): --variant gather=CIG_TMA=0 --variant tma=CIG_TMA=1 KB:57 KB:63
"""
import argparse
import concurrent.futures
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = re.compile(r"^[A-Za-z0-9_-]+$")
KNOB = re.compile(r"^[A-Z_][A-Z0-9_]*=-?[0-9A-Za-z_.]+$")


def parse_variant(text):
    """'name=K=V,K=V' -> (name, '#define K V\\n...'); a one-line reason on a bad one."""
    name, _, defines = text.partition("=")
    if not NAME.match(name):
        raise ValueError(f"--variant {text!r}: a name of letters, digits, '_' or '-' first, then '='")
    lines = []
    for item in filter(None, defines.split(",")):
        if not KNOB.match(item):
            raise ValueError(f"--variant {text!r}: {item!r} is not KNOB=VALUE")
        knob, value = item.split("=")
        lines.append(f"#define {knob} {value}\n")
    return name, "".join(lines)


def resolve(spec):
    """'KB:57', 'KB2:10' or a path -> the problem file."""
    m = re.match(r"^KB(2?):(\d+)$", spec)
    if not m:
        path = pathlib.Path(spec)
        return path if path.is_absolute() or path.exists() else ROOT / spec
    if "KERNELBENCH_DIR" not in os.environ:
        sys.exit(f"{spec}: set KERNELBENCH_DIR to a KernelBench checkout")
    level = pathlib.Path(os.environ["KERNELBENCH_DIR"]) / "KernelBench" / ("level2" if m.group(1) else "level1")
    matches = sorted(level.glob(f"{m.group(2)}_*.py"))
    if not matches:
        sys.exit(f"{spec}: no task {m.group(2)} under {level}")
    return matches[0]


def reports(path, kernels):
    """eval --json writes one file for one kernel, a directory of <stem>.json for several."""
    if len(kernels) == 1:
        return {kernels[0]: json.loads(path.read_text())} if path.is_file() else {}
    found = {}
    for k in kernels:
        p = path / f"{k.stem}.json"
        if p.is_file():
            found[k] = json.loads(p.read_text())
    return found


def line(problem, name, r):
    t, s = r.get("time") or {}, r.get("speedup") or {}
    fmt = lambda v, unit: "-" if v is None else f"{v:.4g}{unit}"
    notes = (r.get("compile") or {}).get("performance_warnings") or []
    return (f"{problem} {name}: {r.get('verdict', 'no report')} {fmt(t.get('median_ms'), ' ms')}, "
            f"eager {fmt(s.get('eager'), 'x')}, compile {fmt(s.get('compile'), 'x')}, SOL {fmt(r.get('sol_pct'), '%')}"
            + (f"; ptxas: {notes[0][:120]}" if notes else "")
            + (f"; {r['reason'].splitlines()[0][:160]}" if r.get("verdict") != "pass" and r.get("reason") else ""))


def summary(results, variants):
    """A line per variant judged on several problems: how many passed, and the geometric means of their speedups
    (the figure a seed table quotes)."""
    lines = []
    for name in variants:
        mine = [r["report"] for r in results if r["variant"] == name]
        if len(mine) < 2:
            continue
        passed = [r for r in mine if r.get("verdict") == "pass"]
        means = []
        for key in ("eager", "compile"):
            xs = [(r.get("speedup") or {}).get(key) for r in passed]
            xs = [x for x in xs if x]
            means.append(f"{math.exp(sum(map(math.log, xs)) / len(xs)):.3g}x {key} over {len(xs)}" if xs else f"no {key}")
        lines.append(f"{name}: {len(passed)} of {len(mine)} passed; geometric mean {', '.join(means)}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--precision", default="strict", choices=["strict", "tf32", "bf16"])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=6, help="parallel compiles")
    ap.add_argument("--stop-after", type=float, default=0)
    ap.add_argument("problems", nargs="+")
    args = ap.parse_args()
    start = time.monotonic()
    try:
        variants = dict(parse_variant(v) for v in (args.variant or ["seed="]))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plan, failed, results = [], False, []
    for spec in args.problems:
        kb = re.match(r"^(KB2?:\d+)(?::(.*))?$", spec)
        base, only = (kb.group(1), kb.group(2) or "") if kb else (spec.partition(":")[0], spec.partition(":")[2])
        names = only.split(",") if only else list(variants)
        unknown = [n for n in names if n not in variants]
        if unknown:
            print(f"{spec}: no --variant named {', '.join(unknown)}", file=sys.stderr)
            return 2
        problem = resolve(base)
        seed = out / f"{problem.stem}.cu"
        got = subprocess.run([args.cutegen, "seed", str(problem), "--out", str(seed), "--precision", args.precision],
                             capture_output=True, text=True)
        if got.returncode != 0:
            print(f"{problem.stem}: no seed: {(got.stderr.strip().splitlines() or ['(no reason)'])[-1]}")
            failed = True
            continue
        copies = []
        for name in names:
            copy = out / f"{problem.stem}.{name}.cu"
            copy.write_text(variants[name] + seed.read_text())
            copies.append((name, copy))
        plan.append((problem, copies))
    # Compiles are queued in the problems' order and each evaluation starts once its own copies are built, so
    # the GPU judges the first problems while nvcc builds the rest. The compiles run at nice 19 on --jobs
    # processes (up to four each where nvcc's steps overlap, the early stub's cicc among them: six compiles are
    # the 24 processes eight were before it): leave the judge's two timing threads a CPU each,
    # or it refuses to time ("too busy", docs/judge.md) and retries.
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    built = {copy: pool.submit(subprocess.run, ["nice", "-n", "19", args.cutegen, "compile", str(copy)],
                               capture_output=True, text=True)
             for _, copies in plan for _, copy in copies}
    for problem, copies in plan:
        if args.stop_after and time.monotonic() - start > args.stop_after:
            print(f"stopped after {args.stop_after:.0f} s, before {problem.stem}")
            failed = True
            break
        kernels = []
        for name, copy in copies:
            got = built[copy].result()
            if got.returncode != 0:
                print(f"{problem.stem} {name}: does not build: {(got.stderr.strip().splitlines() or [''])[-1][:200]}")
                failed = True
            else:
                kernels.append(copy)
        if not kernels:
            continue
        target = out / f"{problem.stem}.eval"
        ran = subprocess.run([args.cutegen, "eval", str(problem), *map(str, kernels), "--json", str(target),
                              "--precision", args.precision, "--runs", str(args.runs), "--trials", str(args.trials)],
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
        judged = reports(target, kernels)
        # No report: eval stopped before judging (its one-line reason is the last of its error output).
        why = (ran.stderr.strip().splitlines() or [f"exit {ran.returncode}"])[-1]
        for name, copy in copies:
            if copy not in kernels:
                continue
            r = judged.get(copy, {"reason": why})
            print(line(problem.stem, name, r), flush=True)
            failed |= r.get("verdict") != "pass"
            results.append({"problem": str(problem), "variant": name, "defines": variants[name], "report": r})
    for text in summary(results, variants):
        print(text)
    (out / "ab.json").write_text(json.dumps(results, indent=1))
    if not all(f.done() for f in built.values()):  # stopped early: exit now, not after the builds under way
        sys.stdout.flush()
        os._exit(1)
    pool.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
