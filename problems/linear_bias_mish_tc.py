"""A bias-free Linear, a bias parameter of its own, then Mish (KernelBench level 2's Gemm_BiasAdd_... shape):
    y = mish(x @ W^T + bias)
M, K, N = 2048, 1536, 3000: 16 x 24 = 384 output tiles of 128 x 128, so the seed is the library's 3xTF32
tensor-core GEMM with the epilogue fused (docs/seed.md); N = 3000 is no multiple of the tile, so the last
column tile's overhang must store nothing and read no bias past N.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.mish(self.fc(x) + self.bias)


def get_inputs():
    return [torch.rand(2048, 1536)]


def get_init_inputs():
    return [1536, 3000]
