#!/usr/bin/env python3
"""Launch shapes of one pointwise kernel, in-process, on the problem's inputs and on signed ones.

The judge reports a kernel's time on the slower of two input distributions: the problem's own
(`get_inputs()`) and the same with random signs. For ops with a branch (ELU, SELU: expm1 on the negative
side only) the signed inputs are the slow ones; for ops with transcendental math everywhere (Softplus) both
are. This times contract kernels built with different knob values (the file name says which) and eager
PyTorch on both distributions with CUDA events, the L2 flushed before each run and the GPU kept busy
while the launch is queued, so only the kernels are measured. Any single-input, single-output kernel of
the contract fits (the row softmax's and the reductions' variants too); each variant's largest deviation from the module's
output on the signed inputs is printed beside its times, so a fast wrong variant shows.

Usage: benchmarks/pointwise_variants.py PROBLEM.py KERNEL.so [KERNEL.so ...] [--reps 20]   (needs a CUDA GPU)
"""
import argparse
import importlib.util
import os
import sys

import torch

from contract_abi import contract_call, events_ms

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problem")
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("pointwise_variants: needs a CUDA GPU", file=sys.stderr)
        return 1
    spec = importlib.util.spec_from_file_location("problem", args.problem)
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    model = problem.Model(*problem.get_init_inputs()).cuda()
    torch.manual_seed(0)
    x = problem.get_inputs()[0].cuda()
    signs = torch.randint(0, 2, x.shape, device="cuda", dtype=torch.int8).mul_(2).sub_(1).to(x.dtype)
    sets = {"problem": x, "signed": x * signs}
    del signs
    with torch.no_grad():
        y = torch.empty_like(model(sets["signed"]))  # the output's shape and dtype (a reduction's differ from x's)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print(f"## {os.path.basename(args.problem)}: {tuple(x.shape)} {x.dtype}, {torch.cuda.get_device_name()}\n")
    print("| kernel | problem ms | signed ms | slower | max abs err (signed) |\n|---|---|---|---|---|")
    rows = [("eager", {k: (lambda v=v: model(v)) for k, v in sets.items()})]
    rows += [(os.path.basename(p), {k: contract_call(os.path.abspath(p), v, y) for k, v in sets.items()})
             for p in args.kernels]
    with torch.no_grad():
        expected = model(sets["signed"])
        for name, fns in rows:
            ms = {k: events_ms(fn, flush, args.reps) for k, fn in fns.items()}
            err = "-"
            if name != "eager":
                y.fill_(float("nan") if y.is_floating_point() else -1)
                if hasattr(fns["signed"], "poison"):
                    fns["signed"].poison()  # a workspace kernel must not rely on what its last call left
                fns["signed"]()
                torch.cuda.synchronize()
                err = f"{(y - expected).abs().max().item():.3g}"  # nan (or an index off): something left unwritten
            print(f"| {name} | {ms['problem']:.4f} | {ms['signed']:.4f} | {max(ms.values()):.4f} | {err} |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
