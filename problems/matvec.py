"""Matrix-vector product: A (2050, 131072) @ B (131072, 1) fp32 (1 GiB of A).

KernelBench 4's form (level 1: M 2048, K 1048576) at an eighth of its K, so the judge's trials fit in GPU
memory; M is no multiple of the GEMV seed's rows per CTA. The seed path's GEMV route (docs/seed.md).

CUTEGEN_PROBLEM_SCALE=k divides M and K by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
M = max(1, 2050 // SCALE)
K = max(1, 131072 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, 1)]


def get_init_inputs():
    return []
