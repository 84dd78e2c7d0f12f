#!/usr/bin/env python3
"""Compile time of one candidate kernel through torch.utils.cpp_extension.load_inline versus
`cutegen compile` (cold cache, then cached), on the machine it runs on.

load_inline gets the same .cu plus the minimal torch binding a KernelBench-style harness needs
(torch/extension.h + pybind11), which is what makes it slow. Both target sm_90a with -O3.
Usage: benchmarks/load_inline_vs_cutegen.py --cutegen build/cutegen KERNEL.cu [--out results.json]
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

BINDING = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
static cutegen_tensor describe(const torch::Tensor& t) {
  cutegen_tensor d{};
  d.data = t.data_ptr(); d.dtype = CUTEGEN_FLOAT32; d.rank = t.dim();
  for (int i = 0; i < t.dim(); ++i) { d.shape[i] = t.size(i); d.stride[i] = t.stride(i); }
  return d;
}
torch::Tensor run(std::vector<torch::Tensor> inputs, torch::Tensor out) {
  std::vector<cutegen_tensor> in;
  for (auto& t : inputs) in.push_back(describe(t));
  cutegen_tensor o = describe(out);
  cutegen_forward(in.data(), (int32_t)in.size(), &o, 1, at::cuda::getCurrentCUDAStream());
  return out;
}
'''


def cutlass_include():
    env = os.environ.get("CUTLASS_DIR")
    return pathlib.Path(env) / "include" if env else ROOT / "third_party" / "cutlass" / "include"


def time_load_inline(source: str) -> float:
    from torch.utils.cpp_extension import load_inline
    build = tempfile.mkdtemp(prefix="cutegen-load-inline-")
    start = time.monotonic()
    load_inline(name="cutegen_bench", cpp_sources="torch::Tensor run(std::vector<torch::Tensor> inputs, torch::Tensor out);",
                cuda_sources=source + BINDING, functions=["run"], build_directory=build,
                extra_include_paths=[str(cutlass_include()), str(ROOT / "include")],
                extra_cuda_cflags=["-O3", "-std=c++20", "--expt-relaxed-constexpr",  # torch >= 2.15 headers need C++20
                                   "-gencode", "arch=compute_90a,code=sm_90a"], verbose=False)
    seconds = time.monotonic() - start
    shutil.rmtree(build, ignore_errors=True)
    return seconds


def time_cutegen(cutegen: str, kernel: str, cache: str) -> dict:
    env = dict(os.environ, CUTEGEN_CACHE_DIR=cache)
    out = {}
    for label in ("cold", "cached"):
        start = time.monotonic()
        p = subprocess.run([cutegen, "compile", kernel, "--json"], env=env, capture_output=True, text=True)
        out[label] = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(f"cutegen compile failed: {p.stdout}{p.stderr}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutegen", required=True)
    ap.add_argument("kernel")
    ap.add_argument("--out")
    args = ap.parse_args()
    source = pathlib.Path(args.kernel).read_text()
    cache = tempfile.mkdtemp(prefix="cutegen-bench-cache-")
    result = {"kernel": args.kernel, "cutegen": time_cutegen(args.cutegen, args.kernel, cache),
              "load_inline_s": time_load_inline(source), "nproc": os.cpu_count()}
    shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
