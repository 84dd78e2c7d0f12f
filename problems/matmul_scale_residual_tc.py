"""A matmul with a (K, N) weight parameter, scaled, plus the product again (KernelBench level 2's
Matmul_Scaling_ResidualAdd shape):
    h = x @ W;  y = h * 0.5 + h
M, K, N = 3000, 1000, 2050: 24 x 17 = 408 output tiles of 128 x 128, so the seed is the library's 3xTF32
tensor-core GEMM with the epilogue fused; B is read (K, N) row-major, and N % 4 != 0 sends the GEMM's store
through the library's padded output (the epilogue must leave the padding columns alone).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features**0.5)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.matmul(x, self.weight)
        return h * self.scale + h


def get_inputs():
    return [torch.randn(3000, 1000)]


def get_init_inputs():
    return [1000, 2050, 0.5]
