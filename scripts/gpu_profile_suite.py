#!/usr/bin/env python3
"""The profile part of the GPU suite: `cutegen profile` on every honest example of attacks/manifest.json.

Each must profile with hardware counters (status ok), report at least one kernel, and give a
summary of at most 40 lines; the wall time of the ncu run per candidate is the recorded benchmark.
Writes profile.json and profile.md to --out (and each profile's JSON and log under profile/);
exits 1 when any example fails.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_entry(cutegen, entry, out_dir, timeout):
    kernel = ROOT / entry["kernel"]
    problem = ROOT / entry["problem"]
    stem = kernel.stem
    json_path = out_dir / "profile" / f"{stem}.json"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(cutegen), "profile", str(problem), str(kernel), "--json", str(json_path), "--seed", "1234",
           "--timeout", str(timeout)]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 900)
    seconds = time.monotonic() - start
    (out_dir / "profile" / f"{stem}.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    result = {"kernel": entry["kernel"], "problem": entry["problem"], "exit": proc.returncode,
              "command_seconds": round(seconds, 1)}
    problems = []
    if not json_path.exists():
        problems.append("no JSON written: " + (proc.stderr.strip().splitlines() or [""])[-1])
    else:
        report = json.loads(json_path.read_text())
        profile = report.get("profile", {})
        summary = profile.get("summary", "")
        result.update({"status": profile.get("status"), "message": profile.get("message", ""),
                       "profile_seconds": round(profile.get("seconds", 0), 1),
                       "evaluation_seconds": round(report.get("evaluation", {}).get("seconds", 0), 1),
                       "kernels": [k["name"] for k in profile.get("kernels", [])],
                       "summary_lines": summary.count("\n"),
                       "signals": [s["kind"] for s in profile.get("signals", [])]})
        if profile.get("status") != "ok":
            problems.append(f"status {profile.get('status')}: {profile.get('message', '')}")
        if not profile.get("kernels"):
            problems.append("no kernel profiled")
        if summary.count("\n") > 40:
            problems.append(f"summary has {summary.count(chr(10))} lines (> 40)")
    if proc.returncode != 0 and not problems:
        problems.append(f"exit code {proc.returncode}")
    result["ok"] = not problems
    result["problems"] = problems
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=int, default=600, help="seconds for ncu per example")
    ap.add_argument("--only", default="", help="comma-separated kernel file stems (each on its first problem)")
    args = ap.parse_args()
    out_dir = pathlib.Path(args.out)
    manifest = json.loads((ROOT / "attacks" / "manifest.json").read_text())
    entries = manifest["honest"]
    if args.only:
        wanted, seen = set(args.only.split(",")), set()
        entries = [e for e in entries
                   if pathlib.Path(e["kernel"]).stem in wanted and not (pathlib.Path(e["kernel"]).stem in seen
                                                                         or seen.add(pathlib.Path(e["kernel"]).stem))]
    results = []
    for entry in entries:
        r = run_entry(args.cutegen, entry, out_dir, args.timeout)
        results.append(r)
        print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['kernel']}: profile {r.get('profile_seconds', '?')} s, "
              f"{len(r.get('kernels', []))} kernel(s), signals {', '.join(r.get('signals', []))}"
              + ("" if r["ok"] else f" -- {'; '.join(r['problems'])}"))
    (out_dir / "profile.json").write_text(json.dumps(results, indent=2))
    lines = ["| kernel | problem | status | profile (ncu) s | evaluation s | kernels | summary lines | signals |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        lines.append(f"| {r['kernel']} | {r['problem']} | {r.get('status', 'none')} | {r.get('profile_seconds', '')} | "
                     f"{r.get('evaluation_seconds', '')} | {len(r.get('kernels', []))} | {r.get('summary_lines', '')} | "
                     f"{', '.join(r.get('signals', []))} |")
    (out_dir / "profile.md").write_text("\n".join(lines) + "\n")
    sys.exit(0 if all(r["ok"] for r in results) else 1)


if __name__ == "__main__":
    main()
