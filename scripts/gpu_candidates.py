#!/usr/bin/env python3
"""A step's candidates screened together on a GPU (`scripts/gpu-check --stages candidates`): `cutegen optimize
--candidates 3` with the turnaround benchmark's stand-in LLM (every proposal the same kernel as a new source)
must screen the three in one session (`screen_candidates`: a real runner each, one slot, one calibration),
each correct, with times that agree; a full evaluation after it, if the step has one, runs alone.

With --attack one of the three proposals is a kernel that writes nothing (the stand-in's TURNAROUND_ATTACK_ONE):
the group must fail it alone (`unwritten`), its outputs poisoned again after whichever candidate ran before it on
the shared slot, and pass the other two."""
import argparse
import hashlib
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
    ap.add_argument("--attack", action="store_true", help="one of the three proposals writes nothing")
    args = ap.parse_args()
    name = "candidates-attack" if args.attack else "candidates"
    run = args.out / f"{name}-run"
    if run.exists():
        raise SystemExit(f"gpu_candidates: {run} exists; give a new --out")
    llm = "exec:" + shlex.join([sys.executable, str(ROOT / "benchmarks" / "turnaround_llm.py")])
    cmd = [args.cutegen, "optimize", args.problem, "--llm", llm, "--out", str(run), "--start", "scratch",
           "--examples", "none", "--steps", "1", "--candidates", "3", "--tune", "never", "--profile-from", "never"]
    env = dict(os.environ, TURNAROUND_KERNEL=str((ROOT / args.kernel).resolve()))
    if args.attack:
        env["TURNAROUND_ATTACK_ONE"] = str((args.out / "attack-count").resolve())
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (args.out / f"{name}.log").write_text(proc.stdout)
    if proc.returncode != 0:
        print(proc.stdout[-3000:])
        raise SystemExit(f"gpu_candidates: cutegen optimize exited {proc.returncode}")
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if line.strip()]
    screen_events = [e for e in events if e.get("type") == "screen"]
    screens = [e["evaluation"] for e in screen_events]
    # The attack's screening: the one whose key is the sha256 of a candidate's source that writes nothing.
    attack_keys = {hashlib.sha256(p.read_bytes()).hexdigest() for p in run.glob("steps/*-cand-*/kernel.cu")
                   if "writes nothing" in p.read_text()}
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
    honest = [s for s, e in zip(screens, screen_events) if e.get("key") not in attack_keys]
    if args.attack:
        attacked = [(g.get("index"), s.get("verdict")) for s, g, e in zip(screens, groups, screen_events)
                    if e.get("key") in attack_keys]
        if [v for _, v in attacked] != ["unwritten"]:
            problems.append(f"the kernel that writes nothing was not the one candidate failed as unwritten: {attacked}")
        print(f"candidates: the attack was candidate {[i for i, _ in attacked]} of the group "
              f"(after another on the slot when above 0), verdict {[v for _, v in attacked]}")
    if [s.get("verdict") for s in honest] != ["pass"] * len(honest):
        problems.append(f"the honest kernels did not pass their screening: {verdicts} "
                        f"{[s.get('reason') for s in screens]}")
    medians = [(s.get("time") or {}).get("median_ms") for s in honest]
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
