#!/usr/bin/env python3
"""The demo cassette end to end on a GPU: `cutegen optimize problems/relu.py --llm replay:...` must
go compile error -> diagnosis -> repair -> correct -> one accepted and one rolled-back optimisation
with the real judge, and the exported best/model_new.py (the KernelBench file, compiled by torch) must
match the reference Model. Then the
compile cache is cleared and the finished run resumed: it must replay every answer and rebuild
best/kernel.so from the logged source. The run's report.html must show every evaluation and be what
`cutegen report` renders from the directory (a copy is left as demo-report.html)."""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def check_export(run: pathlib.Path) -> str:
    """best/model_new.py, the self-contained KernelBench file, built for real by torch's extension loader
    (CUTLASS_DIR: the project's headers unless set), must compute what the problem's Model computes."""
    script = f"""
import importlib.util, torch
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
problem = load("problem_ref", {str(run / 'best' / 'problem.py')!r})
model_new = load("model_new", {str(run / 'best' / 'model_new.py')!r})  # compiles the kernel on import
torch.manual_seed(0)
ref = problem.Model(*problem.get_init_inputs()).cuda()
torch.manual_seed(0)
new = model_new.ModelNew(*model_new.get_init_inputs()).cuda()
x = [t.cuda() * 2 - 1 if isinstance(t, torch.Tensor) else t for t in model_new.get_inputs()]
y_ref, y_new = ref(*x), new(*x)
torch.cuda.synchronize()
print("export max abs diff", (y_ref - y_new).abs().max().item())
assert torch.equal(y_ref, y_new), "ModelNew differs from Model"
"""
    env = dict(os.environ)
    if not env.get("CUTLASS_DIR") and (ROOT / "third_party" / "cutlass" / "include").is_dir():
        env["CUTLASS_DIR"] = str(ROOT / "third_party" / "cutlass")
    env.setdefault("TORCH_EXTENSIONS_DIR", str(run / "torch_extensions"))
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900, env=env)
    if p.returncode != 0:
        raise SystemExit(f"best/model_new.py failed:\n{p.stdout}{p.stderr}")
    return p.stdout.strip()


def check_resume(cutegen: str, cmd: list, run: pathlib.Path, events_before: int) -> list:
    """Resume of the finished run after the compile cache was cleared: every answer replays from the
    log (no new events) and best/kernel.so is rebuilt from the logged source instead of failing."""
    cleared = subprocess.run([cutegen, "cache", "--clear"], capture_output=True, text=True, timeout=120)
    if cleared.returncode != 0:
        return [f"cutegen cache --clear exited {cleared.returncode}: {cleared.stderr.strip()}"]
    p = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=540)
    (run.parent / "demo-resume.log").write_text(p.stdout + "\n--- stderr ---\n" + p.stderr)
    problems = []
    if p.returncode != 0:
        problems.append(f"resume exited {p.returncode}: {p.stderr.strip()[-500:]}")
    if "rebuilt it from the logged source" not in p.stderr:
        problems.append("resume did not say it rebuilt the best kernel's library")
    if not (run / "best" / "kernel.so").exists():
        problems.append("best/kernel.so missing after the resume")
    events_after = sum(1 for line in (run / "events.jsonl").read_text().splitlines() if line.strip())
    if events_after != events_before:
        problems.append(f"resume of a finished run wrote events ({events_before} -> {events_after})")
    return problems


def check_page(cutegen: str, run: pathlib.Path, out: pathlib.Path, evaluations: int) -> list:
    """report.html written by optimize: both charts (or the reason there is no roofline), one point per
    evaluation, and the same bytes as `cutegen report` renders from the directory afterwards."""
    page = run / "report.html"
    if not page.exists():
        return ["report.html missing"]
    text = page.read_text()
    shutil.copy(page, out / "demo-report.html")  # to look at
    problems = []
    traj = text[text.find('id="trajectory"'):]
    traj = traj[:traj.find("</svg>")]
    points = traj.count('class="pt ')
    if points != evaluations:
        problems.append(f"report.html: {points} trajectory points for {evaluations} evaluations")
    if 'id="roofline"' not in text and 'id="no-roofline"' not in text:
        problems.append("report.html has neither a roofline chart nor the reason for its absence")
    again = out / "demo-report-again.html"
    p = subprocess.run([cutegen, "report", str(run), "-o", str(again)], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        problems.append(f"cutegen report exited {p.returncode}: {p.stderr.strip()}")
    elif again.read_text() != text:
        problems.append("cutegen report renders another page than optimize wrote (one source expected)")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    run = pathlib.Path(args.out) / "demo-run"
    shutil.rmtree(run, ignore_errors=True)  # an earlier gpu-check's: cutegen refuses to start over a run
    cmd = [args.cutegen, "optimize", str(ROOT / "problems/relu.py"), "--llm",
           "replay:" + str(ROOT / "examples/cassettes/relu-demo"), "--steps", "2", "--out", str(run),
           "--trials", "2", "--runs", "50"]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=540)
    seconds = time.monotonic() - start
    (pathlib.Path(args.out) / "demo.log").write_text(p.stdout + "\n--- stderr ---\n" + p.stderr)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        raise SystemExit(f"demo: cutegen optimize exited {p.returncode}")
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if line.strip()]
    evals = [e for e in events if e.get("type") == "eval"]
    steps = {e["key"]: e for e in events if e.get("type") == "decision"}
    verdicts = [e["evaluation"]["verdict"] for e in evals]
    problems = []
    if verdicts[:2] != ["compile_error", "pass"]:
        problems.append(f"expected compile_error then pass, got {verdicts}")
    if steps.get("step1", {}).get("outcome") != "accepted":
        problems.append(f"step 1: {steps.get('step1')}")
    if steps.get("step2", {}).get("outcome") != "slower":
        problems.append(f"step 2: {steps.get('step2')}")
    for f in ("kernel.cu", "eval.json", "kernel.so", "relu_op.py", "model_new.py"):
        if not (run / "best" / f).exists():
            problems.append(f"best/{f} missing")
    problems += check_page(args.cutegen, run, pathlib.Path(args.out), len(evals))
    export = check_export(run) if not problems else "not checked"
    if not problems:
        problems += check_resume(args.cutegen, cmd, run, len(events))
    summary = {"seconds": round(seconds, 1), "verdicts": verdicts,
               "times_ms": [(e["evaluation"].get("time") or {}).get("median_ms") for e in evals],
               "step1": steps.get("step1"), "step2": steps.get("step2"), "export": export, "problems": problems}
    (pathlib.Path(args.out) / "demo.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
