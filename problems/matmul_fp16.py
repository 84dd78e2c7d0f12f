"""Half-precision GEMM: C = A @ B with fp16 inputs and output, N = 8192 (1.1 TFLOP: tensor-core territory).

CUTEGEN_PROBLEM_SCALE=k divides N by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
N = max(1, 8192 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(N, N, dtype=torch.float16), torch.rand(N, N, dtype=torch.float16)]


def get_init_inputs():
    return []
