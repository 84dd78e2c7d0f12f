"""x @ W with W given (K, N), a per-column scale and shift, a division, then each row's mean times 2: an (M, 1)
output. The ops before the mean are affine in the product, so the mean moves through it: the seed folds W
with the scale into one vector of K and computes a matrix-vector product (GemmKernel::folded). M, K, N = 300,
1001, 777 fp32: K and N odd, so the fold and the rows take their one-float-at-a-time paths.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.scale = nn.Parameter(torch.rand(out_features) + 0.5)
        self.shift = nn.Parameter(torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.weight)
        y = (y * self.scale - self.shift) / 3.0
        return torch.mean(y, dim=1, keepdim=True) * 2.0


def get_inputs():
    return [torch.randn(300, 1001)]


def get_init_inputs():
    return [1001, 777]
