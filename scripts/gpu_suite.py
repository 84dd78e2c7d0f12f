#!/usr/bin/env python3
"""The GPU suite: `cutegen eval` on every entry of attacks/manifest.json.

Honest examples must pass; every attack must get exactly the verdict the manifest names (a
rejection for the wrong reason is a failure too: it means the guarantee it tests is not the one
that caught it). An entry may also require a minimum reported time (`min_ms`: a forged or cached
time must not show), files that must not exist afterwards (`absent_files`: the sandbox held), or a
precision policy. cutegen runs with decoy API keys in its environment; an attack that finds one
writes a wrong answer, and no report, log or output may contain the decoys.
Writes suite.json and suite.md to --out; exits 1 when any entry disagrees.
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


def run_entry(cutegen, entry, out_dir, args):
    kernel = ROOT / entry["kernel"]
    problem = ROOT / entry["problem"]
    stem = kernel.stem
    report_path = out_dir / "eval" / f"{stem}.json"
    report_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(cutegen), "eval", str(problem), str(kernel), "--json", str(report_path),
           "--trials", str(args.trials), "--runs", str(args.runs), "--seed", "1234",
           "--runner-timeout", str(args.runner_timeout)]
    if entry.get("precision"):
        cmd += ["--precision", entry["precision"]]
    if entry.get("expect", "pass") != "pass" or entry.get("min_ms"):
        cmd.append("--no-baselines")  # baselines say nothing about a cheat; they cost device time
    for path in entry.get("absent_files", []):
        pathlib.Path(path).unlink(missing_ok=True)
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.runner_timeout * 4 + 900,
                          env=dict(os.environ, **DECOYS))
    seconds = time.monotonic() - start
    log = proc.stdout + "\n--- stderr ---\n" + proc.stderr
    (out_dir / "eval" / f"{stem}.log").write_text(log)
    got, reason, report = "no_report", proc.stderr.strip().splitlines()[-1:] or [""], {}
    reason = reason[0]
    text = log
    if report_path.exists():
        text += report_path.read_text()
        report = json.loads(report_path.read_text())
        got, reason = report.get("verdict", "no_verdict"), report.get("reason", "")
    expect = entry.get("expect", "pass")
    exit_ok = (proc.returncode == 0) == (expect == "pass")
    median = (report.get("time") or {}).get("median_ms")
    problems = []
    if got != expect:
        problems.append(f"expected {expect}")
    if not exit_ok:
        problems.append(f"exit code {proc.returncode}")
    if entry.get("min_ms") and (median is None or median < entry["min_ms"]):
        problems.append(f"reported {median} ms, below the {entry['min_ms']} ms the kernel really takes")
    for path in entry.get("absent_files", []):
        if pathlib.Path(path).exists():
            problems.append(f"{path} exists: the sandbox did not hold")
    if any(decoy in text for decoy in DECOYS.values()):
        problems.append("a decoy API key appears in the output or the report")
    return {
        "kernel": entry["kernel"], "problem": entry["problem"], "expect": expect, "got": got,
        "ok": not problems, "problems": problems, "exit_code": proc.returncode, "reason": reason,
        "seconds": round(seconds, 2), "median_ms": median,
        "event_median_ms": (report.get("time") or {}).get("event_median_ms"),
        "speedup": report.get("speedup"), "sol_pct": report.get("sol_pct"), "note": entry.get("note", ""),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated kernel file stems")
    ap.add_argument("--runtime-only", action="store_true", help="skip entries refused at compile time (CI checks them)")
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--runner-timeout", type=int, default=20, help="seconds per call of a candidate")
    args = ap.parse_args()
    out_dir = pathlib.Path(args.out)
    manifest = json.loads((ROOT / "attacks" / "manifest.json").read_text())
    entries = [dict(e, expect="pass") for e in manifest["honest"]] + manifest["attacks"]
    entries = [e for e in entries if not e.get("static")] if args.runtime_only else entries
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if pathlib.Path(e["kernel"]).stem in wanted]
    results = []
    for e in entries:
        r = run_entry(args.cutegen, e, out_dir, args)
        results.append(r)
        mark = "ok  " if r["ok"] else "FAIL"
        why = "; ".join(r["problems"]) + (" -- " if r["problems"] else "")
        print(f"{mark} {pathlib.Path(r['kernel']).stem:28s} expect {r['expect']:16s} got {r['got']:16s} "
              f"{r['seconds']:7.1f}s  {why}{r['reason'][:100]}", flush=True)
        (out_dir / "suite.json").write_text(json.dumps(results, indent=2))  # after each entry: a cut-off run keeps its results
    lines = ["| kernel | problem | expected | got | ok | eval s | median ms | speedup eager/compile | SOL % |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        sp = r["speedup"] or {}
        ms_s = f"{r['median_ms']:.4g}" if r['median_ms'] is not None else "-"
        sp_s = "/".join(f"{sp[k]:.2f}" if k in sp else "-" for k in ("eager", "compile"))
        lines.append(f"| {r['kernel']} | {r['problem']} | {r['expect']} | {r['got']} | {'yes' if r['ok'] else 'NO'} | "
                     f"{r['seconds']} | {ms_s} | {sp_s} | "
                     f"{round(r['sol_pct'], 1) if r['sol_pct'] else '-'} |")
    (out_dir / "suite.md").write_text("\n".join(lines) + "\n")
    bad = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(bad)}/{len(results)} entries as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
