"""A product with a transposed weight parameter, then a minimum with a 0-d parameter and a subtraction:
    y = min(x @ W^T, cap) - cap
(KernelBench level 2's 14 and 68 write their products and constants this way). M, K, N = 777, 1024, 1500 fp32.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, cap: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.05)
        self.cap = nn.Parameter(torch.tensor(cap))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.matmul(x, self.weight.T)
        x = torch.min(x, self.cap)
        return x - self.cap


def get_inputs():
    return [torch.rand(777, 1024)]


def get_init_inputs():
    return [1024, 1500, 0.5]
