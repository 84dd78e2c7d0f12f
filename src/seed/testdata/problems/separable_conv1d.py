"""A depthwise-separable 1-d convolution: nn.Conv1d(8, 8, 5, groups=8) then nn.Conv1d(8, 16, 1)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.depthwise = nn.Conv1d(8, 8, 5, padding=2, groups=8, bias=False)
        self.pointwise = nn.Conv1d(8, 16, 1, bias=False)

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.rand(2, 8, 100)]


def get_init_inputs():
    return []
