"""scripts/gpu_knob_ab.py's plumbing on the CPU, against a stand-in cutegen: each variant is the seed with its
#defines in front, every problem is ONE eval of all its variants (baselines timed once, the same card), the
one-kernel and several-kernel report layouts are both read, and the exit status says whether every variant passed.
What the variants compute is the GPU's to say."""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_knob_ab.py"

# seed writes a stand-in kernel; compile fails for a copy that defines BROKEN; eval writes one report per kernel
# (a directory for several, the file itself for one, as cutegen eval does) whose time depends on the defines, and
# a mismatch for a copy that defines WRONG. Every command is logged.
FAKE = r'''#!/usr/bin/env python3
import json, os, pathlib, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
if args[0] == "seed":
    pathlib.Path(args[args.index("--out") + 1]).write_text("// seed of " + pathlib.Path(args[1]).stem + "\n")
elif args[0] == "compile":
    text = pathlib.Path(args[1]).read_text()
    if "HOLD" in text:  # a long build: done only once some evaluation has started (10 s at most)
        for _ in range(100):
            if any(l.startswith("eval ") for l in open(os.environ["FAKE_LOG"])):
                break
            time.sleep(0.1)
        with open(os.environ["FAKE_LOG"], "a") as log:
            log.write("built " + args[1] + "\n")
    sys.exit(1 if "BROKEN" in text else 0)
elif args[0] == "eval":
    if "refused" in args[1]:
        sys.exit("cutegen: the CPU was too busy to time on (tried 3 times)")
    kernels = [a for a in args[2:args.index("--json")]]
    target = pathlib.Path(args[args.index("--json") + 1])
    for k in kernels:
        text = pathlib.Path(k).read_text()
        report = {"verdict": "mismatch" if "WRONG" in text else "pass", "reason": "3 of 100 elements differ",
                  "time": {"median_ms": 1.0 + text.count("#define")}, "speedup": {"eager": 6.0 if pathlib.Path(k).name.startswith("relu.") else 1.5, "compile": 1.25},
                  "sol_pct": 40.0, "compile": {"performance_warnings": ["(C7510) serialised"] if "SLOW" in text else []}}
        if len(kernels) == 1:
            target.write_text(json.dumps(report))
        else:
            target.mkdir(exist_ok=True)
            (target / (pathlib.Path(k).stem + ".json")).write_text(json.dumps(report))
'''


def run(tmp_path, *argv):
    fake = tmp_path / "cutegen"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    log = tmp_path / "log.txt"
    log.touch()
    proc = subprocess.run([sys.executable, str(SCRIPT), "--cutegen", str(fake), "--out", str(tmp_path / "out"),
                           "--jobs", "2", *argv], capture_output=True, text=True,
                          env=dict(os.environ, FAKE_LOG=str(log)), cwd=ROOT)
    return proc, log.read_text().splitlines()


def test_every_variant_of_a_problem_is_judged_in_one_eval_with_its_defines_in_front(tmp_path):
    proc, log = run(tmp_path, "--variant", "seed=", "--variant", "pair=CIG_TMA_PAIRED=1,CIG_TMA_STAGES=4",
                    "--variant", "slow=SLOW=1", "problems/conv2d_3x3.py", "problems/conv2d_bias_relu.py:seed")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "conv2d_3x3 seed: pass 1 ms, eager 1.5x, compile 1.25x, SOL 40%",
        "conv2d_3x3 pair: pass 3 ms, eager 1.5x, compile 1.25x, SOL 40%",
        "conv2d_3x3 slow: pass 2 ms, eager 1.5x, compile 1.25x, SOL 40%; ptxas: (C7510) serialised",
        "conv2d_bias_relu seed: pass 1 ms, eager 1.5x, compile 1.25x, SOL 40%",
        "seed: 2 of 2 passed; geometric mean 1.5x eager over 2, 1.25x compile over 2"]
    pair = (tmp_path / "out" / "conv2d_3x3.pair.cu").read_text()
    assert pair == "#define CIG_TMA_PAIRED 1\n#define CIG_TMA_STAGES 4\n// seed of conv2d_3x3\n"
    assert (tmp_path / "out" / "conv2d_3x3.seed.cu").read_text() == "// seed of conv2d_3x3\n"
    evals = [line for line in log if line.startswith("eval ")]
    assert len(evals) == 2, "one eval per problem, all its variants in it"
    assert evals[0].count(".cu") == 3 and "--runs 30" in evals[0]
    assert sum(line.startswith("compile ") for line in log) == 4
    recorded = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert [(pathlib.Path(r["problem"]).stem, r["variant"]) for r in recorded] == [
        ("conv2d_3x3", "seed"), ("conv2d_3x3", "pair"), ("conv2d_3x3", "slow"), ("conv2d_bias_relu", "seed")]


def test_a_variant_that_fails_or_does_not_build_fails_the_run(tmp_path):
    proc, _ = run(tmp_path, "--variant", "ok=", "--variant", "wrong=WRONG=1", "--variant", "broken=BROKEN=1",
                  "problems/conv2d_3x3.py")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("conv2d_3x3 broken: does not build")
    assert "conv2d_3x3 ok: pass 1 ms" in lines[1]
    assert lines[2] == ("conv2d_3x3 wrong: mismatch 2 ms, eager 1.5x, compile 1.25x, SOL 40%; "
                        "3 of 100 elements differ")


def test_a_problem_is_judged_while_later_problems_still_compile(tmp_path):
    proc, log = run(tmp_path, "--variant", "seed=", "--variant", "long=HOLD=1", "problems/conv2d_3x3.py:seed",
                    "problems/conv2d_bias_relu.py:long")
    assert proc.returncode == 0, proc.stderr
    first_eval = next(i for i, l in enumerate(log) if l.startswith("eval ") and "conv2d_3x3" in l)
    built = next(i for i, l in enumerate(log) if l.startswith("built "))
    assert first_eval < built, "the first problem waited for every compile"
    assert [l.split()[1] for l in log if l.startswith("eval ")][1].endswith("conv2d_bias_relu.py")


def test_an_eval_that_ends_without_a_report_says_why(tmp_path):
    problem = tmp_path / "refused.py"
    problem.write_text("")
    proc, _ = run(tmp_path, str(problem))
    assert proc.returncode == 1
    assert proc.stdout.strip() == ("refused seed: no report -, eager -, compile -, SOL -; "
                                   "cutegen: the CPU was too busy to time on (tried 3 times)")


def test_the_summary_counts_failures_and_averages_the_passing_speedups(tmp_path):
    proc, _ = run(tmp_path, "--variant", "seed=", "--variant", "wrong=WRONG=1", "problems/conv2d_3x3.py",
                  "problems/relu.py:seed", "problems/conv2d_bias_relu.py:wrong")
    assert proc.returncode == 1
    # 1.5x and 6x: a geometric mean of 3x (the arithmetic one would be 3.75x).
    assert proc.stdout.splitlines()[-2:] == [
        "seed: 2 of 2 passed; geometric mean 3x eager over 2, 1.25x compile over 2",
        "wrong: 0 of 2 passed; geometric mean no eager, no compile"]


def test_bad_arguments_say_why_in_one_line(tmp_path):
    proc, log = run(tmp_path, "--variant", "x=not a knob", "problems/conv2d_3x3.py")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "--variant 'x=not a knob': 'not a knob' is not KNOB=VALUE"
    proc, log = run(tmp_path, "--variant", "a=", "problems/conv2d_3x3.py:b")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "problems/conv2d_3x3.py:b: no --variant named b"
    assert not any(line.startswith("eval ") for line in log)


def test_stop_after_starts_no_further_evaluation(tmp_path):
    proc, log = run(tmp_path, "--stop-after", "0.000001", "problems/conv2d_3x3.py")
    assert proc.returncode == 1
    assert proc.stdout.strip() == "stopped after 0 s, before conv2d_3x3"
    assert not any(line.startswith("eval ") for line in log)
