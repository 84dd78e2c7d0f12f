"""scripts/gpu_conv_tma.py's plumbing on the CPU, against a stand-in cutegen: every seed judged with
`#define CIG_TMA 0` and with `#define CIG_TMA 1` in front, --tma-only and --stop-after, and the exit status (a TMA variant that
fails makes it 1). What the variants compute is the GPU's to say (scripts/gpu-check --stages conv-tma)."""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_conv_tma.py"

# seed writes a stand-in kernel; compile succeeds; eval writes a report whose verdict says which variant ran
# (FAIL_TMA=1: the TMA variant mismatches), and logs each command so the test can see what was judged.
FAKE = r'''#!/usr/bin/env python3
import json, os, pathlib, sys
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
if args[0] == "seed":
    pathlib.Path(args[args.index("--out") + 1]).write_text("// seed of " + pathlib.Path(args[1]).stem + "\n")
elif args[0] == "eval":
    kernel = pathlib.Path(args[2]).read_text()
    tma = kernel.startswith("#define CIG_TMA 1\n")
    verdict = "mismatch" if tma and os.environ.get("FAIL_TMA") else "pass"
    report = {"verdict": verdict, "time": {"median_ms": 1.0 if tma else 2.0}, "speedup": {"eager": 1.5}}
    pathlib.Path(args[args.index("--json") + 1]).write_text(json.dumps(report))
'''


def run(tmp_path, *extra, fail_tma=False):
    fake = tmp_path / "cutegen"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    log = tmp_path / "log.txt"
    env = dict(os.environ, FAKE_LOG=str(log), **({"FAIL_TMA": "1"} if fail_tma else {}))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--cutegen", str(fake), "--out", str(tmp_path / "out"),
                           "--jobs", "2", *extra, "problems/conv2d_3x3.py", "problems/conv2d_bias_relu.py"],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    return proc, log.read_text().splitlines()


def test_both_variants_of_every_seed_are_judged_and_the_tma_one_has_the_define(tmp_path):
    proc, log = run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == ["conv2d_3x3 gather: pass 2.0 ms, vs eager 1.5, vs compile None ",
                     "conv2d_3x3 tma: pass 1.0 ms, vs eager 1.5, vs compile None ",
                     "conv2d_bias_relu gather: pass 2.0 ms, vs eager 1.5, vs compile None ",
                     "conv2d_bias_relu tma: pass 1.0 ms, vs eager 1.5, vs compile None "]
    tma = (tmp_path / "out" / "conv2d_3x3.tma.cu").read_text()
    assert tma == "#define CIG_TMA 1\n// seed of conv2d_3x3\n"
    # The seed itself may take either path: the gather variant pins the knob too.
    gather = (tmp_path / "out" / "conv2d_3x3.gather.cu").read_text()
    assert gather == "#define CIG_TMA 0\n// seed of conv2d_3x3\n"
    assert sum(line.startswith("compile ") for line in log) == 4
    assert sum(line.startswith("eval ") for line in log) == 4


def test_a_failing_tma_variant_fails_the_check(tmp_path):
    proc, _ = run(tmp_path, fail_tma=True)
    assert proc.returncode == 1
    assert "conv2d_3x3 tma: mismatch" in proc.stdout


def test_tma_only_and_stop_after(tmp_path):
    proc, log = run(tmp_path, "--tma-only")
    assert proc.returncode == 0, proc.stderr
    assert [line.split(":")[0] for line in proc.stdout.splitlines()] == ["conv2d_3x3 tma", "conv2d_bias_relu tma"]
    again = tmp_path / "again"
    again.mkdir()
    stopped, log2 = run(again, "--stop-after", "0.001")  # seeding and compiling alone take longer
    assert "stopped after" in stopped.stdout
    assert not any(line.startswith("eval ") for line in log2)


def test_the_precision_policy_reaches_both_the_seed_and_the_judge(tmp_path):
    proc, log = run(tmp_path, "--tma-only", "--precision", "tf32")
    assert proc.returncode == 0, proc.stderr
    seeds = [line for line in log if line.startswith("seed ")]
    evals = [line for line in log if line.startswith("eval ")]
    assert len(seeds) == 2 and all(line.endswith("--precision tf32") for line in seeds), seeds
    assert len(evals) == 2 and all(line.endswith("--precision tf32") for line in evals), evals
    default = tmp_path / "default"
    default.mkdir()
    _, log2 = run(default, "--tma-only")  # without --precision: strict, the judge's default, said outright
    assert all(line.endswith("--precision strict") for line in log2 if line.startswith(("seed ", "eval ")))
