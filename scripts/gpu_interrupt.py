#!/usr/bin/env python3
"""Ctrl-C and `kill` in the middle of an evaluation on a GPU (issue 11): nothing may be left behind and
`--resume` must finish the run.

1. `cutegen optimize` with the demo cassette, in its own session (a terminal's foreground group); as soon
   as a cutegen-runner process exists (an evaluation is on the GPU), SIGINT to the whole group, as a
   terminal's Ctrl-C does. cutegen must exit non-zero within 30 s and no cutegen-runner, worker,
   cutegen-sandbox, nvcc or cicc process of that run may remain. Then `--resume` must finish the run
   (exit 0, best/kernel.so present).
2. The same with SIGTERM to cutegen's pid only (`kill PID`): the children are in groups of their own and
   get no signal from the shell, so cutegen must end them (no resume: it is the same path as 1's).
Usage: gpu_interrupt.py --cutegen build/cutegen --out DIR    (prints and writes DIR/interrupt.json)
"""
import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
WATCHED = ("cutegen-runner", "cutegen_worker", "cutegen-sandbox", "nvcc", "cicc", "ptxas", "cudafe++")


def processes() -> dict:
    """pid -> command line of every process we can see."""
    found = {}
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                pass
    return found


def leftovers(before: set) -> list:
    return [f"{pid}: {cmd[:160]}" for pid, cmd in processes().items()
            if pid not in before and pid != os.getpid() and any(w in cmd for w in WATCHED)]


def wait_for_runner(proc, deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end and proc.poll() is None:
        if any("cutegen-runner" in cmd for cmd in processes().values()):
            return True
        time.sleep(0.05)
    return False


def interrupt_once(cutegen: str, out: pathlib.Path, name: str, how: str, resume: bool) -> dict:
    run = out / name
    shutil.rmtree(run, ignore_errors=True)
    cmd = [cutegen, "optimize", str(ROOT / "problems/relu.py"), "--llm",
           "replay:" + str(ROOT / "examples/cassettes/relu-demo"), "--steps", "2", "--out", str(run),
           "--trials", "1", "--runs", "20"]
    before = set(processes())
    log = open(out / f"{name}.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    result = {"signal": how, "problems": []}
    if not wait_for_runner(proc, 240):
        result["problems"].append("no cutegen-runner appeared (did the run fail early? see the log)")
        proc.kill()
        return result
    time.sleep(0.3)  # inside the evaluation, not at its first instruction
    t0 = time.monotonic()
    if how == "SIGINT to the group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        result["exit_code"] = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        result["problems"].append("cutegen did not exit within 30 s of the signal")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    result["exit_s"] = round(time.monotonic() - t0, 2)
    if result.get("exit_code") == 0:
        result["problems"].append("cutegen exited 0 after being interrupted")
    time.sleep(1.0)  # what is still there a second later was left behind
    result["left_behind"] = leftovers(before)
    if result["left_behind"]:
        result["problems"].append(f"{len(result['left_behind'])} processes left behind")
    if not resume:
        return result
    p = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=400)
    (out / f"{name}-resume.log").write_text(p.stdout + "\n--- stderr ---\n" + p.stderr)
    result["resume_exit_code"] = p.returncode
    if p.returncode != 0:
        result["problems"].append(f"--resume exited {p.returncode}: {p.stderr.strip()[-300:]}")
    elif not (run / "best" / "kernel.so").exists():
        result["problems"].append("best/kernel.so missing after --resume")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"ctrl_c": interrupt_once(args.cutegen, out, "interrupt-int", "SIGINT to the group", resume=True),
               "kill": interrupt_once(args.cutegen, out, "interrupt-term", "SIGTERM to cutegen", resume=False)}
    (out / "interrupt.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 1 if any(r["problems"] for r in results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
