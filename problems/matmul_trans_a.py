"""fp32 GEMM with transposed operands: C = A.T @ B, A (K, M), B (K, N), M = 2048, K = 8192, N = 4096
(137 GFLOP), as KernelBench 16_Matmul_with_transposed_A.

library/gemm_sm90_tf32.cu and gemm_sm90_3xtf32.cu read the transposes through strides (the
shapes tell them which operand is transposed).
CUTEGEN_PROBLEM_SCALE=k divides M, K and N by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
M = max(1, 2048 // SCALE)
K = max(1, 8192 // SCALE)
N = max(1, 4096 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A.T @ B


def get_inputs():
    return [torch.rand(K, M), torch.rand(K, N)]


def get_init_inputs():
    return []
