#!/usr/bin/env python3
"""CPU model of gemm_sm90_3xtf32.cu's numerics against the strict policy (docs/judge.md, guarantee 4).

Emulates, in float64 numpy, what the kernel computes for C = A @ B:
* the pre-pass: big = tf32_rn(x), small = tf32_rn(x - big); A' = [A_big | A_small | A_big],
  B' = [B_big ; B_big ; B_small] over K' = 3K;
* wgmma: each instruction adds 8 exact TF32 products to its fp32 accumulator, and the result is
  rounded toward zero (the pessimistic model: truncation, as measured on earlier tensor cores);
* promotion: every PROMOTE instructions the partial sum is added to the main accumulator with a
  round-to-nearest fp32 add, and the partial accumulator restarts at zero (PROMOTE x 8 of K: 32, 64,
  128 are the knob GX_PROMOTE = 4, 8 (the default), 16).
It prints the rel-L2 error against the float64 product for the kernel model, for fp32 (numpy's
float32 matmul, standing in for PyTorch's cuBLAS SGEMM) and for the same model without promotion (one
accumulator over all of K'), on positive (torch.rand) and signed inputs, and the strict policy's
rel-L2 limit, max(1e-6, 5 x fp32's). Usage: benchmarks/gemm_3xtf32_error_model.py [--m 128] [--k 4096]
"""
import argparse

import numpy as np


def tf32_rn(x):
    """x (float32) rounded to nearest on a 10-bit mantissa, as the kernel's tf32_round does."""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def f32_rz(x):
    """float64 -> nearest float32 toward zero."""
    r = x.astype(np.float32)
    over = np.abs(r.astype(np.float64)) > np.abs(x)
    r[over] = np.nextafter(r[over], np.float32(0))
    return r


def kernel_model(a, b, promote_k):
    """a (M, K), b (K, N) float32; promote_k: K' per promotion (0: never)."""
    a_big = tf32_rn(a)
    a_small = tf32_rn(a - a_big)
    b_big = tf32_rn(b)
    b_small = tf32_rn(b - b_big)
    a3 = np.concatenate([a_big, a_small, a_big], axis=1).astype(np.float64)
    b3 = np.concatenate([b_big, b_big, b_small], axis=0).astype(np.float64)
    k3 = a3.shape[1]
    main = np.zeros((a.shape[0], b.shape[1]), np.float32)
    part = np.zeros_like(main)
    for k0 in range(0, k3, 8):  # one wgmma: 8 products, exact, added and truncated
        part = f32_rz(part.astype(np.float64) + a3[:, k0:k0 + 8] @ b3[k0:k0 + 8, :])
        if promote_k and (k0 + 8) % promote_k == 0:
            main = (main + part).astype(np.float32)  # round-to-nearest fp32 add
            part = np.zeros_like(main)
    return (main + part).astype(np.float32) if promote_k else part


def rel_l2(x, ref):
    return float(np.linalg.norm(x.astype(np.float64) - ref) / np.linalg.norm(ref))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=128, help="M = N (default 128)")
    ap.add_argument("--k", type=int, default=4096, help="K (default 4096, KernelBench 1's)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    for name, draw in (("positive", lambda s: rng.random(s, dtype=np.float32)),
                       ("signed", lambda s: rng.random(s, dtype=np.float32) * 2 - 1)):
        a, b = draw((args.m, args.k)), draw((args.k, args.m))
        ref = a.astype(np.float64) @ b.astype(np.float64)
        fp32 = rel_l2(a @ b, ref)
        limit = max(1e-6, 5 * fp32)
        row = [f"{name}: fp32 {fp32:.2e}, limit {limit:.2e}"]
        for promote in (32, 64, 128, 512, 0):
            err = rel_l2(kernel_model(a, b, promote), ref)
            label = f"promote every {promote}" if promote else "no promotion"
            row.append(f"{label} {err:.2e} ({'pass' if err <= limit else 'FAIL'})")
        print("; ".join(row))


if __name__ == "__main__":
    main()
