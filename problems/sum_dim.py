"""Reduction over a middle dimension: torch.sum(x, dim=1, keepdim=True) of a 64 x 1024 x 1023 fp32
tensor (odd sizes: the seed's column path and its bounds)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.rand(64, 1024, 1023)]


def get_init_inputs():
    return [1]
