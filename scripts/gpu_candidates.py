#!/usr/bin/env python3
"""A step's candidates screened together on a GPU (`scripts/gpu-check --stages candidates`): `cutegen optimize
--candidates 3` with the turnaround benchmark's stand-in LLM (every proposal the same kernel as a new source)
must screen the three in one session (`screen_candidates`: a real runner each, one slot, one calibration),
each correct, with times that agree; a full evaluation after it, if the step has one, runs alone."""
import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--problem", default="problems/relu.py")
    ap.add_argument("--kernel", default="library/elementwise.cu")
    args = ap.parse_args()
    run = args.out / "candidates-run"
    if run.exists():
        raise SystemExit(f"gpu_candidates: {run} exists; give a new --out")
    llm = "exec:" + shlex.join([sys.executable, str(ROOT / "benchmarks" / "turnaround_llm.py")])
    cmd = [args.cutegen, "optimize", args.problem, "--llm", llm, "--out", str(run), "--start", "scratch",
           "--examples", "none", "--steps", "1", "--candidates", "3", "--tune", "never", "--profile-from", "never"]
    env = dict(os.environ, TURNAROUND_KERNEL=str((ROOT / args.kernel).resolve()))
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (args.out / "candidates.log").write_text(proc.stdout)
    if proc.returncode != 0:
        print(proc.stdout[-3000:])
        raise SystemExit(f"gpu_candidates: cutegen optimize exited {proc.returncode}")
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if line.strip()]
    screens = [e["evaluation"] for e in events if e.get("type") == "screen"]
    problems = []
    if len(screens) != 3:
        problems.append(f"{len(screens)} screenings logged, not 3")
    groups = [(s.get("session") or {}).get("screening_group") or {} for s in screens]
    if sorted(g.get("index", -1) for g in groups) != [0, 1, 2] or any(g.get("candidates") != 3 for g in groups):
        problems.append(f"the screenings were not one group of three: {groups}")
    calibrated = [((s.get("session") or {}).get("runner") or {}).get("calibrated") for s in screens]
    if sorted(map(bool, calibrated)) != [False, False, True]:
        problems.append(f"not one calibration for the group: runner.calibrated {calibrated}")
    verdicts = [s.get("verdict") for s in screens]
    if verdicts != ["pass"] * 3:
        problems.append(f"the same honest kernel three times did not pass its screening: {verdicts} "
                        f"{[s.get('reason') for s in screens]}")
    medians = [(s.get("time") or {}).get("median_ms") for s in screens]
    if all(isinstance(m, (int, float)) and m > 0 for m in medians):
        if max(medians) > 1.25 * min(medians):
            problems.append(f"the same kernel's screened medians disagree by more than 25 %: {medians}")
    else:
        problems.append(f"screened medians missing: {medians}")
    full = [e for e in events if e.get("type") == "eval" and str(e.get("what", "")).startswith("step")]
    # The same kernel screens no faster than the best most of the time, and the step then ends at screening; a
    # full evaluation, when there is one, is the chosen candidate's alone.
    if any((e["evaluation"].get("session") or {}).get("screening_group") for e in full):
        problems.append("the chosen candidate's full evaluation ran in a screening group")
    print(f"candidates: 3 screened in one group, medians {medians} ms, verdicts {verdicts}; "
          f"{len(full)} full evaluation(s) after")
    for p in problems:
        print("gpu_candidates FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
