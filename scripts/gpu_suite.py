#!/usr/bin/env python3
"""The GPU suite: `cutegen eval` on every entry of attacks/manifest.json.

Honest kernels must pass; every attack must get exactly the verdict the manifest names (a rejection
for the wrong reason is a failure too: it means the guarantee it tests is not the one that caught
it). An entry may also require a minimum reported time (`min_ms`: a forged or cached time must not
show), files that must not exist afterwards (`absent_files`: the sandbox held), a precision
policy, or how many shapes the generalization trials verify (`verified_shapes`). cutegen runs with decoy API keys in its environment; an attack that finds one writes a wrong
answer, and no report, log or output may contain the decoys.

Entries that share a problem and settings are evaluated by one `cutegen eval` with several kernels
(one worker, the problem loaded once). Writes suite.json and suite.md to --out; exits 1 when any
entry disagrees.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DECOYS = {"OPENAI_API_KEY": "sk-decoy-7c1e5b0f-openai", "ANTHROPIC_API_KEY": "sk-ant-decoy-93d2-anthropic"}


def settings(entry, args):
    """What the eval command of an entry depends on; entries with equal settings share one command."""
    honest = entry.get("expect", "pass") == "pass" and not entry.get("min_ms")
    return (entry["problem"], entry.get("precision", "strict"), honest,
            args.trials if honest else args.attack_trials, args.runs if honest else args.attack_runs)


def run_group(cutegen, key, entries, out_dir, args, group_index):
    problem, precision, baselines, trials, runs = key
    report_dir = out_dir / "eval" / f"group{group_index:02d}"
    report_dir.mkdir(parents=True, exist_ok=True)
    kernels = [str(ROOT / e["kernel"]) for e in entries]
    cmd = [str(cutegen), "eval", str(ROOT / problem), *kernels, "--json", str(report_dir / "report.json" if len(kernels) == 1 else report_dir),
           "--trials", str(trials), "--runs", str(runs), "--seed", "1234", "--runner-timeout", str(args.runner_timeout),
           "--precision", precision, "--generalize", "2"]  # the default, stated: the manifest names the shapes verified with two
    if not baselines:
        cmd.append("--no-baselines")  # baselines say nothing about a cheat; they cost device time
    for e in entries:
        for path in e.get("absent_files", []):
            pathlib.Path(os.path.expanduser(path)).unlink(missing_ok=True)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **DECOYS),
                              timeout=len(kernels) * (args.runner_timeout * 4 + 300) + 600)
        log, code = proc.stdout + "\n--- stderr ---\n" + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        log, code = f"{exc}\n{exc.stdout or ''}\n--- stderr ---\n{exc.stderr or ''}", -1
    seconds = time.monotonic() - start
    (report_dir / "eval.log").write_text(log)
    last_line = log.strip().splitlines()[-1:] or [""]
    results, seen = [], {}
    for e in entries:
        stem = pathlib.Path(e["kernel"]).stem
        seen[stem] = seen.get(stem, 0) + 1
        name = "report.json" if len(kernels) == 1 else (f"{stem}.json" if seen[stem] == 1 else f"{stem}-{seen[stem]}.json")
        results.append(check_entry(e, report_dir / name, log, last_line[0], seconds / len(entries)))
    if code == -1:
        for r in results:
            r["ok"] = False
            r["problems"].append("the eval command ran past the suite's time limit")
    return results


def check_entry(entry, report_path, log, last_line, seconds):
    got, reason, report, text = "no_report", last_line, {}, log
    if report_path.exists():
        text += report_path.read_text()
        report = json.loads(report_path.read_text())
        got, reason = report.get("verdict", "no_verdict"), report.get("reason", "")
    expect = entry.get("expect", "pass")
    time_ = report.get("time") or {}
    median = time_.get("median_ms")
    problems = []
    accepted = expect if isinstance(expect, list) else [expect]  # a list: any of these verdicts
    if got not in accepted:
        problems.append(f"expected {' or '.join(accepted)}")
    # A coded failure says how far an attack got: kernel_error with another code means its probe never ran.
    if entry.get("reason_contains") and got in accepted and entry["reason_contains"] not in reason:
        problems.append(f"the reason lacks {entry['reason_contains']!r}: the attack did not get as far as it must")
    if entry.get("min_ms") and got == "pass" and (median is None or median < entry["min_ms"]):
        problems.append(f"reported {median} ms, below the {entry['min_ms']} ms the kernel really takes")
    verified = len((report.get("generalization") or {}).get("verified") or [])
    if entry.get("verified_shapes") and got == "pass" and verified != entry["verified_shapes"]:
        problems.append(f"{verified} shapes verified, where the generalization trials must verify "
                        f"{entry['verified_shapes']} (the problem's own, and each other shape the kernel computes)")
    for path in entry.get("absent_files", []):
        if pathlib.Path(os.path.expanduser(path)).exists():
            problems.append(f"{path} exists: the sandbox did not hold")
    if any(decoy in text for decoy in DECOYS.values()):
        problems.append("a decoy API key appears in the output or a report")
    return {
        "kernel": entry["kernel"], "problem": entry["problem"], "expect": "|".join(accepted), "got": got, "ok": not problems,
        "problems": problems, "reason": reason, "seconds": round(seconds, 2), "median_ms": median,
        "event_median_ms": time_.get("event_median_ms"), "slower_kind": time_.get("slower_kind"),
        "speedup": report.get("speedup"), "sol_pct": report.get("sol_pct"), "note": entry.get("note", ""),
        "phase_seconds": report.get("phase_seconds"), "verified_shapes": verified,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated kernel file stems")
    ap.add_argument("--runtime-only", action="store_true", help="skip entries refused at compile time (CI checks them)")
    ap.add_argument("--trials", type=int, default=2, help="problem trials for honest kernels")
    ap.add_argument("--runs", type=int, default=50, help="timed calls for honest kernels")
    ap.add_argument("--attack-trials", type=int, default=1)
    ap.add_argument("--attack-runs", type=int, default=20)
    ap.add_argument("--runner-timeout", type=int, default=20, help="seconds per call of a candidate")
    ap.add_argument("--resume", action="store_true", help="keep the entries --out/suite.json already holds, run the rest")
    ap.add_argument("--stop-after", type=float, default=0,
                    help="start no eval command after this many seconds (0: no limit); with --resume a later run goes on")
    ap.add_argument("--max-group", type=int, default=12,
                    help="kernels per eval command at most (a command cut off by a device limit loses its whole group)")
    args = ap.parse_args()
    out_dir = pathlib.Path(args.out)
    manifest = json.loads((ROOT / "attacks" / "manifest.json").read_text())
    entries = [dict(e, expect="pass") for e in manifest["honest"]] + manifest["attacks"]
    if args.runtime_only:
        entries = [e for e in entries if not e.get("static")]
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if pathlib.Path(e["kernel"]).stem in wanted]
    results = []
    done_path = out_dir / "suite.json"
    if args.resume and done_path.exists():
        results = json.loads(done_path.read_text())
        done = {(r["kernel"], r["problem"]) for r in results}
        entries = [e for e in entries if (e["kernel"], e["problem"]) not in done]
        print(f"resuming: {len(results)} entries kept, {len(entries)} to run", flush=True)
    groups = {}
    for e in entries:
        groups.setdefault(settings(e, args), []).append(e)
    # Groups whose kernels include a CUTLASS GEMM (minutes of nvcc) go last: with gpu-check's background
    # precompile the others find their kernels compiled while those still build.
    chunks = [(key, group[i:i + args.max_group]) for key, group in groups.items()
              for i in range(0, len(group), max(1, args.max_group))]
    chunks.sort(key=lambda kg: any(e.get("slow_compile") for e in kg[1]))
    started, not_run = time.monotonic(), 0
    first_index = len(results)
    for n, (key, group) in enumerate(chunks):
        index = first_index + n
        if args.stop_after and time.monotonic() - started > args.stop_after:
            not_run = sum(len(g) for _, g in chunks[n:])
            print(f"stopping: {args.stop_after:.0f} s passed; {not_run} entries not run (--resume goes on)", flush=True)
            break
        print(f"-- {key[0]} ({len(group)} kernels, precision {key[1]})", flush=True)
        for r in run_group(args.cutegen, key, group, out_dir, args, index):
            results.append(r)
            mark = "ok  " if r["ok"] else "FAIL"
            why = "; ".join(r["problems"]) + (" -- " if r["problems"] else "")
            ms = f"{r['median_ms']:.4g} ms" if r["median_ms"] is not None else ""
            print(f"{mark} {pathlib.Path(r['kernel']).stem:30s} expect {r['expect']:15s} got {r['got']:15s} "
                  f"{ms:>11s}  {why}{r['reason'][:110]}", flush=True)
        (out_dir / "suite.json").write_text(json.dumps(results, indent=2))  # a cut-off run keeps its results
    lines = ["| kernel | problem | expected | got | ok | median ms (events) | speedup eager/compile | SOL % | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        sp = r["speedup"] or {}
        ms = f"{r['median_ms']:.4g}" if r["median_ms"] is not None else "-"
        if r["event_median_ms"] is not None:
            ms += f" ({r['event_median_ms']:.4g})"
        sp_s = "/".join(f"{sp[k]:.2f}" if k in sp else "-" for k in ("eager", "compile"))
        lines.append(f"| {r['kernel']} | {r['problem']} | {r['expect']} | {r['got']} | {'yes' if r['ok'] else 'NO'} | "
                     f"{ms} | {sp_s} | {round(r['sol_pct'], 1) if r['sol_pct'] else '-'} | {r['note']} |")
    (out_dir / "suite.md").write_text("\n".join(lines) + "\n")
    bad = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(bad)}/{len(results)} entries as expected" + (f"; {not_run} not run" if not_run else ""))
    return 1 if bad or not_run else 0


if __name__ == "__main__":
    sys.exit(main())
