"""A 1x1x1 Conv3d without a bias: the pointwise convolution as a batched GEMM."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(4, 8, 1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 4, 4, 8, 8)]


def get_init_inputs():
    return []
