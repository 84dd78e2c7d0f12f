"""Matrix product with a long K: A (250, 131077) @ B (131077, 260) fp32.

KernelBench 6's form (level 1: M = N = 256, K = 524288): 6 output tiles of 128x128, too few for the GPU,
so the seed splits K over CTAs (docs/seed.md); M, N and K are no multiple of the tile or k-step, and the
slices are uneven.

CUTEGEN_PROBLEM_SCALE=k divides M, N and K by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
M = max(1, 250 // SCALE)
N = max(1, 260 // SCALE)
K = max(1, 131077 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
