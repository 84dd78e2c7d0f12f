"""bf16 GEMM with the second operand stored N x K ("NT", as nn.Linear keeps its weight):
C = A @ B.T, A (M, K) = (4096, 2048), B (N, K) = (8192, 2048), C (M, N) in bf16.

CUTEGEN_PROBLEM_SCALE=k divides M, N and K by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
M = max(1, 4096 // SCALE)
N = max(1, 8192 // SCALE)
K = max(1, 2048 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B.T


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(N, K, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
