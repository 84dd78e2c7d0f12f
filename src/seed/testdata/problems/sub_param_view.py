"""A parameter of one value per channel, viewed as (1, C, 1, 1, 1) and subtracted, then swish (KernelBench level
2's 89 after its softmax): the broadcast seed reads the parameter's values in the view's shape."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.subtract = nn.Parameter(torch.randn(16))

    def forward(self, x):
        x = x - self.subtract.view(1, -1, 1, 1, 1)
        return torch.sigmoid(x) * x


def get_inputs():
    return [torch.rand(4, 16, 3, 5, 6)]


def get_init_inputs():
    return []
