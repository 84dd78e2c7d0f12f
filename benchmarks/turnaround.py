#!/usr/bin/env python3
"""The loop's turnaround (issue 36): how long one optimisation step takes besides the LLM's own time.

For each PROBLEM=KERNEL case, `cutegen optimize` runs from scratch with the stand-in LLM
benchmarks/turnaround_llm.py (synthesis answers with KERNEL; every optimisation proposal is KERNEL as a new
source, so each candidate is compiled cold and judged in full while the LLM takes no time), once per
--candidates value. Per step the wall time from the step's last LLM answer to its decision in the run log
is what a candidate costs (one candidate) or what the whole step costs (several: compiled together,
screened, the best judged in full). Prints one table (median per case and candidate count, and the ratio of
the N-candidate step to the one-candidate step) and writes it to OUT/turnaround.md.

  benchmarks/turnaround.py --cutegen build-gpu/cutegen --out DIR [--steps 4] [--candidates 1,4] [--slow-first]
                           [--repeat N] [PROBLEM=KERNEL ...]

--slow-first: the synthesis kernel runs its work twice (benchmarks/turnaround_llm.py), so each run's first step
proposes a faster kernel, judges its chosen candidate in full and keeps it. Without it the proposals are as fast
as the best, and a step of several candidates mostly ends at screening, with no full evaluation to time. Use it
with --steps 1 and --repeat N (runs per candidate count) for N kept steps each.

Needs a GPU (the judge). Without cases: KernelBench-size ReLU, softmax and square GEMM (19, 23, 1)."""
import argparse
import json
import os
import pathlib
import shlex
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_CASES = [
    "problems/relu_large.py=attacks/honest/relu_vec.cu",        # pointwise, KernelBench 19's size
    "problems/relu_large.py=attacks/honest/relu_cute_1d.cu",    # a ReLU of CuTe's tensors alone (half the nvcc)
    "problems/relu_large.py=library/elementwise.cu",            # the pointwise example the prompts show (no atoms)
    "problems/softmax_large.py=library/softmax_ticket.cu",      # reduction, KernelBench 23's size
    "problems/matmul_square.py=library/gemm_sm90_3xtf32.cu",    # the CUTLASS GEMM, KernelBench 1's size
]


def step_walls(events: list) -> list:
    """Per optimisation step of a run log (events.jsonl's lines, parsed): the step number, the seconds from
    the step's last LLM answer to its decision, how many LLM answers the step had, and the full evaluation's
    compile and session seconds where the log has them, the session's own phases (the worker's
    `session.phase_seconds`: runner start, trials, the timed loop's parts, full audits), and how that candidate's host
    compile went (`host_pch`, "used" through the precompiled header) and how nvcc's steps ran (`nvcc_steps`: "overlapped,
    host compile from the early stub" where it started at cicc's stub). Steps without an LLM answer (none) are
    left out."""
    steps, llm_t, llm_n, phases, session, host_pch, nvcc_steps = [], None, 0, {}, {}, None, None
    for e in events:
        kind = e.get("type")
        if kind == "llm" and e.get("what") == "optimize":
            llm_t, llm_n = e["t"], llm_n + 1
        elif kind == "eval" and str(e.get("what", "")).startswith("step"):
            evaluation = e.get("evaluation") or {}
            phases = evaluation.get("phase_seconds") or {}
            session = (evaluation.get("session") or {}).get("phase_seconds") or {}
            # How the evaluated candidate's host compile went (the compile stage's host_pch): "used" when it read
            # the precompiled header of its includes.
            host_pch = (evaluation.get("compile") or {}).get("host_pch")
            nvcc_steps = (evaluation.get("compile") or {}).get("nvcc_steps")
        elif kind == "decision" and e.get("decision") == "step" and e.get("kind", "optimization") == "optimization":
            if llm_t is not None:
                steps.append({"step": e.get("step"), "wall_s": e["t"] - llm_t, "llm_answers": llm_n,
                              "outcome": e.get("outcome"), "compile_s": phases.get("compile"),
                              "session_s": phases.get("session"), "session_phases": session, "host_pch": host_pch,
                              "nvcc_steps": nvcc_steps})
            llm_t, llm_n, phases, session, host_pch, nvcc_steps = None, 0, {}, {}, None, None
    return steps


def read_events(path: pathlib.Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_case(cutegen: str, problem: str, kernel: str, candidates: int, steps: int, out: pathlib.Path,
             slow_first: bool = False, run: int = 0, config: str = "") -> list:
    run_dir = out / f"{pathlib.Path(problem).stem}-{pathlib.Path(kernel).stem}-c{candidates}{f'-r{run}' if run else ''}"
    if run_dir.exists():
        raise SystemExit(f"turnaround: {run_dir} exists; give a new --out")
    llm = "exec:" + shlex.join([sys.executable, str(ROOT / "benchmarks" / "turnaround_llm.py")])
    cmd = [cutegen, "optimize", problem, "--llm", llm, "--out", str(run_dir), "--start", "scratch", "--examples", "none",
           "--steps", str(steps), "--plateau", str(steps + 1), "--candidates", str(candidates), "--tune", "never",
           "--profile-from", "never"] + (["--config", config] if config else [])
    env = dict(os.environ, TURNAROUND_KERNEL=str((ROOT / kernel).resolve()), TURNAROUND_SLOW_FIRST="1" if slow_first else "0")
    start = time.time()
    print(f"== {problem} with {candidates} candidate(s): {shlex.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (out / f"{run_dir.name}.log").write_text(proc.stdout)
    if proc.returncode != 0:
        print(proc.stdout[-2000:], file=sys.stderr)
        raise SystemExit(f"turnaround: cutegen optimize exited {proc.returncode} ({run_dir.name}); log in {out}")
    walls = step_walls(read_events(run_dir / "events.jsonl"))
    print(f"   {len(walls)} steps in {time.time() - start:.0f} s: "
          + ", ".join(f"{w['wall_s']:.1f} s" for w in walls), flush=True)
    for w in walls:
        if w["session_phases"]:
            print(f"   step {w['step']} session: " + ", ".join(f"{k} {v:.2f} s" for k, v in w["session_phases"].items()),
                  flush=True)
    return walls


def median(values: list):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def table(results: dict, counts: list) -> str:
    """One row per case: the median step wall per candidate count and each count's ratio to one candidate."""
    head = ["case"] + [f"{n} cand. step s (compile / session)" for n in counts] + [f"{n} / 1" for n in counts if n != 1]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, by_count in results.items():
        cells, base = [case], median([w["wall_s"] for w in by_count.get(1, [])])
        for n in counts:
            ws = by_count.get(n, [])
            m, c, s = median([w["wall_s"] for w in ws]), median([w["compile_s"] for w in ws]), median([w["session_s"] for w in ws])
            # A step of several candidates whose fastest screened no faster than the best ends without a full
            # evaluation (no session of its own): said, since such a step is cheaper than one that is judged.
            screened_only = sum(1 for w in ws if w["session_s"] is None) if n > 1 else 0
            note = f"; {screened_only} of {len(ws)} ended at screening" if screened_only else ""
            # Whether the timed compiles read the host header (1.3-1.4 s of a pointwise step): a table from runs with
            # and without it must say which it is.
            judged = [w for w in ws if w["session_s"] is not None]
            if judged:
                used = sum(1 for w in judged if w.get("host_pch") == "used")
                early = sum(1 for w in judged if "early stub" in (w.get("nvcc_steps") or ""))
                note += f"; host header {used} of {len(judged)}; early stub {early} of {len(judged)}"
            cells.append("-" if m is None else
                         f"{m:.1f} ({'-' if c is None else f'{c:.1f}'} / {'-' if s is None else f'{s:.1f}'}{note})")
        for n in counts:
            if n == 1:
                continue
            m = median([w["wall_s"] for w in by_count.get(n, [])])
            cells.append("-" if m is None or not base else f"{m / base:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--steps", type=int, default=4, help="optimisation steps per run")
    ap.add_argument("--candidates", default="1,4", help="comma-separated candidate counts")
    ap.add_argument("--slow-first", action="store_true", help="a synthesis kernel twice as slow: every first step is kept")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case and candidate count")
    ap.add_argument("--config", default="", help="a cutegen config file for every run, e.g. "
                    "{\"compile\": {\"stub_ahead\": false}} for the host compile after cicc (an A/B of the early stub)")
    ap.add_argument("cases", nargs="*", help="PROBLEM=KERNEL (paths from the repository root)")
    args = ap.parse_args()
    counts = [int(c) for c in args.candidates.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    results = {}
    for case in args.cases or DEFAULT_CASES:
        problem, sep, kernel = case.partition("=")
        if not sep or not (ROOT / problem).is_file() or not (ROOT / kernel).is_file():
            raise SystemExit(f"turnaround: {case!r} is not PROBLEM=KERNEL with both files in the repository")
        name = f"{pathlib.Path(problem).stem} ({pathlib.Path(kernel).stem})"
        results[name] = {n: [w for r in range(args.repeat)
                             for w in run_case(args.cutegen, problem, kernel, n, args.steps, args.out, args.slow_first, r,
                                               args.config)]
                         for n in counts}
        (args.out / "turnaround.json").write_text(json.dumps(results, indent=1))
    md = table(results, counts)
    (args.out / "turnaround.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
