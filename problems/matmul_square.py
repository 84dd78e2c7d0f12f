"""GEMM: C = A @ B for square fp32 matrices, N = 4096 (137 GFLOP).

Matches attacks/honest/gemm_tiled.cu: rank-2 contiguous fp32, M and N multiples of 128, K of 8.

CUTEGEN_PROBLEM_SCALE=k divides N by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
N = max(1, 4096 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
