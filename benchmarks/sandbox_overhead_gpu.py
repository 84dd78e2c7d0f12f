#!/usr/bin/env python3
"""The runner sandbox's cost per evaluation on a GPU, as an A/B (issue 11's target: under 100 ms).

Runs `cutegen eval` of one kernel with CUTEGEN_RUNNER_SANDBOX=off and =full, alternating, N times each
(compile cached by a warm-up run, baselines off), and compares the medians of what the worker records:
the runner's start (spawn, Landlock, CUDA start, shared buffers), its load (seccomp, capabilities,
dlopen), the whole session and the whole eval's wall time.

Usage: sandbox_overhead_gpu.py --cutegen build/cutegen --out DIR [--runs 5] [PROBLEM KERNEL]
Writes DIR/sandbox-ab.json and prints a markdown table (benchmarks/results.md records it).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def one_eval(cutegen, problem, kernel, mode, out: pathlib.Path) -> dict:
    env = dict(os.environ, CUTEGEN_RUNNER_SANDBOX=mode)
    json_path = out.with_suffix(".json")
    cmd = [cutegen, "eval", problem, kernel, "--trials", "1", "--runs", "20", "--no-baselines", "--json", str(json_path)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t0
    out.write_text(p.stdout + "\n--- stderr ---\n" + p.stderr)
    if p.returncode != 0:
        sys.exit(f"sandbox_overhead_gpu: eval with CUTEGEN_RUNNER_SANDBOX={mode} exited {p.returncode}: "
                 f"{p.stderr.strip()[-300:]}")
    report = json.loads(json_path.read_text())
    runner = report["session"]["runner"]
    if report["verdict"] != "pass":
        sys.exit(f"sandbox_overhead_gpu: {mode}: verdict {report['verdict']}: {report.get('reason')}")
    return {"wall_s": wall, "session_s": report["phase_seconds"]["session"], "start_ms": runner["start_ms"],
            "load_ms": runner["load_ms"], "sandbox": runner["sandbox"], "time_ms": report["time"]["median_ms"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("problem", nargs="?", default=str(ROOT / "problems/relu.py"))
    ap.add_argument("kernel", nargs="?", default=str(ROOT / "attacks/honest/relu_vec.cu"))
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    one_eval(a.cutegen, a.problem, a.kernel, "full", out / "warmup.log")  # fills the compile cache
    rows = {"off": [], "full": []}
    for i in range(a.runs):
        for mode in ("off", "full") if i % 2 == 0 else ("full", "off"):
            rows[mode].append(one_eval(a.cutegen, a.problem, a.kernel, mode, out / f"{mode}-{i}.log"))
    (out / "sandbox-ab.json").write_text(json.dumps(rows, indent=1))
    med = {m: {k: statistics.median(r[k] for r in rows[m]) for k in ("wall_s", "session_s", "start_ms", "load_ms")}
           for m in rows}
    print(f"| measure (median of {a.runs}) | sandbox off | sandbox full | difference |")
    print("|---|---|---|---|")
    for key, scale, unit in (("start_ms", 1, "ms"), ("load_ms", 1, "ms"), ("session_s", 1000, "ms"),
                             ("wall_s", 1000, "ms")):
        off, full = med["off"][key] * scale, med["full"][key] * scale
        print(f"| {key.split('_')[0]} | {off:.1f} {unit} | {full:.1f} {unit} | {full - off:+.1f} {unit} |")


if __name__ == "__main__":
    main()
