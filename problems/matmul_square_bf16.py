"""GEMM in bf16: C = A @ B for square bf16 matrices, N = 4096 (137 GFLOP), bf16 output (fp32 reference).

KernelBench 1_Square_matrix_multiplication_ in bf16: the target of library/gemm_sm90_bf16.cu.

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
    return [torch.randn(N, N, dtype=torch.bfloat16), torch.randn(N, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
