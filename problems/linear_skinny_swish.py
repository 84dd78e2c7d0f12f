"""A Linear of few rows and a large weight, then Swish and a scale (KernelBench level 2's
Matmul_Swish_Scaling shape, with its weight halved):
    h = x @ W.T + b;  y = h * sigmoid(h) * 2.0
M, K, N = 128, 8192, 16384: 128 rows of x against a 16384 x 8192 weight, so the seed is the skinny 3xTF32
kernel (the weight split in shared memory as it streams; the library GEMM would first write three split
copies of it, seven times its bytes of traffic for 128 rows). K = 8200 would be the odd-size check's reach:
the generalization trials run other batch sizes.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scaling_factor: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        return h * torch.sigmoid(h) * self.scaling_factor


def get_inputs():
    return [torch.rand(128, 8192)]


def get_init_inputs():
    return [8192, 16384, 2.0]
