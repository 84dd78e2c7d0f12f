"""A bias-free Linear on a 3-d input, then a bias parameter of its own, swish, and a residual with the product:
    h = x @ W^T;  z = h + bias;  y = z * sigmoid(z) * scale + h.detach()
x is (8, 125, 768), so the product folds (8, 125) into M = 1000; N = 1000, K = 768. `bias` is an (N,)
parameter broadcast over the rows (KernelBench level 2's "BiasAdd"), `scale` a (1,)-shaped parameter.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)
        self.scale = nn.Parameter(torch.full((1,), 0.75))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        z = h + self.bias
        z = z * torch.sigmoid(z)
        return z * self.scale + h.detach()


def get_inputs():
    return [torch.rand(8, 125, 768)]


def get_init_inputs():
    return [768, 1000]
