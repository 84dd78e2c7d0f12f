"""The values of torch.min over dimension 0 of a 3000 x 2000 fp32 matrix (the (values, indices) pair's
first element)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=0)[0]


def get_inputs():
    return [torch.rand(3000, 2000)]


def get_init_inputs():
    return []
