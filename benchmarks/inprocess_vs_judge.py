#!/usr/bin/env python3
"""Is a kernel's gap to eager PyTorch the kernel's or the judge's? Times an exported kernel in-process.

For each run directory (`cutegen optimize ... --out RUN`, its `best/` exported), loads `best/model_new.py`
(the drop-in op: the same kernel.so the judge timed, called in this process) and the reference Model,
and times both alternately with CUDA events on the same inputs, the L2 flushed before every run as the
judge does. Prints, per run: in-process kernel ms, eager ms, and the judge's time and event time from
`best/eval.json`. If the in-process kernel matches the judge's events, the kernel itself is that slow; if
it matches eager, the gap is the judge's environment (another process, IPC-mapped buffers, contexts).

Usage: benchmarks/inprocess_vs_judge.py RUN_DIR [RUN_DIR...] [--runs 50]   (needs a CUDA GPU)
"""
import argparse
import importlib.util
import json
import pathlib
import statistics
import sys

import torch


def load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_ms(fn, inputs, flush, runs: int) -> list:
    out = []
    for _ in range(runs):
        flush.zero_()  # 256 MiB written: the L2 (50 MB on an H200) holds nothing of the inputs
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*inputs)
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs_dirs", nargs="+", type=pathlib.Path)
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("inprocess_vs_judge: needs a CUDA GPU", file=sys.stderr)
        return 1
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print("| run | in-process kernel ms | eager ms | judge ms | judge events ms |")
    print("|---|---|---|---|---|")
    for i, run in enumerate(args.runs_dirs):
        best = run / "best"
        if not (best / "model_new.py").exists():
            print(f"inprocess_vs_judge: {best} has no model_new.py (did the run pass and export?)", file=sys.stderr)
            return 1
        new = load(best / "model_new.py", f"model_new_{i}")
        init = new.get_init_inputs()
        model_new = new.ModelNew(*init).cuda()
        reference = model_new.reference  # the same parameters for both
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in new.get_inputs()]
        with torch.no_grad():
            kernel, eager = [], []
            for _ in range(2):  # alternate, so drift hits both alike
                kernel += time_ms(model_new, inputs, flush, args.runs // 2)
                eager += time_ms(reference, inputs, flush, args.runs // 2)
        judged = json.loads((best / "eval.json").read_text()).get("time") or {}
        print(f"| {run.name} | {statistics.median(kernel):.4f} | {statistics.median(eager):.4f} | "
              f"{judged.get('median_ms', float('nan')):.4f} | {judged.get('event_median_ms', float('nan')):.4f} |")
        del model_new, reference, inputs
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
