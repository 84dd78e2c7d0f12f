#!/usr/bin/env python3
"""Checks `cutegen bench --baselines-only` against a direct PyTorch measurement (issue 13: within 3%).

For each task of the suite directory that passes --filter (KernelBench numbers, e.g. 19-32), imports the
problem here, builds Model(*get_init_inputs()) on the GPU and times model(*get_inputs()) eagerly and under
torch.compile the plain way — CUDA events around each call after an L2 flush and a synchronize, the median
of 100 — independently of the worker's code, then compares with the suite's results/<name>.json."""
import argparse
import importlib.util
import json
import pathlib
import statistics
import sys

import torch


def load(path):
    spec = importlib.util.spec_from_file_location(pathlib.Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_ms(fn, inputs, runs=100):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(10):
        fn(*inputs)
    times = []
    for i in range(runs):
        flush.fill_(i & 0xFF)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*inputs)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def in_ranges(number, spec):
    for term in spec.split(","):
        lo, _, hi = term.partition("-")
        if number is not None and int(lo) <= number <= int(hi or lo):
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("--filter", default="19-32")
    ap.add_argument("--tolerance", type=float, default=0.03)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    failures = 0
    for rec_path in sorted(pathlib.Path(args.suite, "results").glob("*.json")):
        rec = json.loads(rec_path.read_text())
        if not in_ranges(rec.get("number"), args.filter) or rec["verdict"] != "measured":
            continue
        module = load(rec["problem"])
        torch.manual_seed(0)
        with torch.no_grad():
            model = module.Model(*module.get_init_inputs()).cuda()
            inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
            direct = {"eager": median_ms(model, inputs)}
            torch._dynamo.reset()
            compiled = torch.compile(model)
            compiled(*inputs)
            direct["compile"] = median_ms(compiled, inputs)
        line = [rec["name"]]
        for mode in ("eager", "compile"):
            ours = rec.get(f"{mode}_ms")
            if ours is None:
                line.append(f"{mode}: not measured by bench ({rec.get(mode + '_error', '')[:60]})")
                continue
            diff = ours / direct[mode] - 1
            ok = abs(diff) <= args.tolerance
            failures += not ok
            line.append(f"{mode} {ours:.4g} vs {direct[mode]:.4g} ms ({diff:+.1%}){'' if ok else ' OUTSIDE'}")
        print("  ".join(line))
    print("all within tolerance" if not failures else f"{failures} measurement(s) outside ±{args.tolerance:.0%}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
