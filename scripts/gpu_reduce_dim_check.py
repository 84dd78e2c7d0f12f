#!/usr/bin/env python3
"""reduce_dim.cu against torch on the shapes its launch paths split on (needs a CUDA GPU and a cutegen build).

The suite judges reduce_dim on a few problems; this checks each path on many small shapes at once:
the row path (the last dimension) with row lengths that are and are not multiples of 4, on 16-byte
aligned tensors and on tensors offset by one float (the scalar path), and the column path's wide and
narrow tiles; sum, max, argmax and argmin, on uniform values and on integer values full of ties (argmax/
argmin must return the first index of the extreme, as torch does). Each operation and dimension is the
library file with `kOp` and `kDim` set, as the seed sets them, compiled by `cutegen compile`.

Usage: scripts/gpu_reduce_dim_check.py --cutegen build-gpu/cutegen   (exit 1 on any mismatch)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from contract_abi import contract_call  # noqa: E402

OP_LINE = "constexpr ReduceOp kOp = ReduceOp::sum;"
DIM_LINE = "constexpr int kDim = 1;"
# dim -> shapes: the last dimension of 2-D tensors (row path), dim 1 of 3-D ones (column path: few
# outputs take the narrow tile, many the wide one).
SHAPES = {
    -1: [(7, 4095), (5, 3), (3, 1), (1000, 4097), (64, 5), (9, 8), (33, 1030), (2, 100003)],
    1: [(1, 3000, 2000), (3, 129, 33), (64, 100, 1023), (2, 5, 300)],
}
OPS = ["sum", "max", "argmax", "argmin"]


def build(cutegen, op, dim, workdir):
    source = open(os.path.join(ROOT, "library", "reduce_dim.cu")).read()
    for line in (OP_LINE, DIM_LINE):
        if line not in source:
            sys.exit(f"gpu_reduce_dim_check: reduce_dim.cu no longer has the line `{line}` the seed sets")
    source = source.replace(OP_LINE, f"constexpr ReduceOp kOp = ReduceOp::{op};")
    source = source.replace(DIM_LINE, f"constexpr int kDim = {dim};")
    path = os.path.join(workdir, f"reduce_{op}_{'last' if dim < 0 else dim}.cu")
    with open(path, "w") as f:
        f.write(source)
    out = subprocess.run([cutegen, "compile", "--json", path], capture_output=True, text=True)
    result = json.loads(out.stdout or "{}")
    if not result.get("library"):
        sys.exit(f"gpu_reduce_dim_check: {path} did not compile: {result.get('verdict')} {result.get('errors')}")
    return result["library"]


def reference(op, x, dim):
    if op == "max":
        return torch.max(x, dim=dim).values
    return getattr(torch, op)(x, dim=dim)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cutegen", required=True)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_reduce_dim_check: needs a CUDA GPU")
    wrong = checks = 0
    with tempfile.TemporaryDirectory() as workdir:
        for dim, shapes in SHAPES.items():
            for op in OPS:
                call_lib = build(args.cutegen, op, dim, workdir)
                for shape in shapes:
                    for aligned in (True, False):
                        for kind in ("uniform", "ties"):
                            torch.manual_seed(1)
                            n = 1
                            for s in shape:
                                n *= s
                            base = (torch.rand(n + 1, device="cuda") if kind == "uniform"
                                    else torch.randint(0, 3, (n + 1,), device="cuda").float())
                            x = (base[:n] if aligned else base[1:]).view(shape)
                            expected = reference(op, x, dim)
                            y = torch.full_like(expected, -7)
                            contract_call(os.path.abspath(call_lib), x, y)()
                            torch.cuda.synchronize()
                            ok = (torch.allclose(y, expected, rtol=1e-5, atol=1e-4) if op == "sum"
                                  else torch.equal(y, expected))
                            checks += 1
                            if not ok:
                                wrong += 1
                                diff = (y.double() - expected.double()).abs().max().item()
                                print(f"WRONG {op} dim {dim} {shape} aligned={aligned} {kind}: max diff {diff}")
    print(f"reduce_dim: {checks - wrong} of {checks} checks match torch")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
