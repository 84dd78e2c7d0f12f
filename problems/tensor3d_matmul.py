"""fp32 product of a 3-d tensor and a matrix: C = A @ B, A (8, 2048, 1024), B (1024, 1536) -> (8, 2048, 1536)
(51.5 GFLOP), the shape of KernelBench 10_3D_tensor_matrix_multiplication (its sizes differ).

torch.matmul broadcasts B over A's leading dimension, so the product is one (16384, 1024) @ (1024, 1536) GEMM:
cutegen's seed gives it the library's 3xTF32 GEMM (library/gemm_sm90_3xtf32.cu), which folds A's
leading dimensions into M (docs/seed.md).
CUTEGEN_PROBLEM_SCALE=k divides the rows, K and N by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
BATCH = 8
M = max(1, 2048 // SCALE)
K = max(1, 1024 // SCALE)
N = max(4, 1536 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
