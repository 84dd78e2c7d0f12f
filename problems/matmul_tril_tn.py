"""torch.tril(A.T @ B) with A given as (K, M) = (1000, 1500) and B as (1000, 1300), fp32: a transposed
operand and a masked product at irregular sizes."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A.T, B))


def get_inputs():
    return [torch.rand(1000, 1500), torch.rand(1000, 1300)]


def get_init_inputs():
    return []
