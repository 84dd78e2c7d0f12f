"""A Linear layer with its bias, minus a per-column parameter, then each row's sum and a tanh: an (M,)
output. Affine up to the sum, so the sum moves through the product: the seed folds the weight's N rows into
one vector of K (in slices over N, then summed) and computes a matrix-vector product (GemmKernel::folded).
M, K, N = 2048, 4096, 3000 fp32.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.offset = nn.Parameter(torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(torch.sum(self.fc(x) - self.offset, dim=-1) / 64.0)


def get_inputs():
    return [torch.rand(2048, 4096)]


def get_init_inputs():
    return [4096, 3000]
