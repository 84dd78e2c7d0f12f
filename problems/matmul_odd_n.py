"""fp32 GEMM with sizes that are no multiple of anything: C = A @ B, A (8205, 2949), B (2949, 5921)
(286 GFLOP), KernelBench 8's form (irregular shapes).

N = 5921 is odd, so the output's rows are not 16-byte aligned for a TMA store: the library's 3xTF32 GEMM
(library/gemm_sm90_3xtf32.cu) runs with N padded to 5924 and copies the output out of a padded copy in its
workspace (`unpad_kernel`). K = 2949 pads its split operands to 2952.
CUTEGEN_PROBLEM_SCALE=k divides M, K and N by k.
"""
import os

import torch
import torch.nn as nn

SCALE = int(os.environ.get("CUTEGEN_PROBLEM_SCALE", "1"))
M = max(1, 8205 // SCALE)
K = max(1, 2949 // SCALE)
N = max(1, 5921 // SCALE)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
