"""Reduction over a middle dimension with few outputs: torch.sum(x, dim=1) of a 1 x 3000 x 2000 fp32
tensor -- 2000 sums of 3000 values each, fewer outputs than a GPU has SMs times a wide tile's columns."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(1, 3000, 2000)]


def get_init_inputs():
    return [1]
