"""A convolution, gelu, then a global average pool squeezed to (N, C), as KernelBench level 2's 67 writes it:
conv_then with the reduction over the merged spatial dims, writing the squeezed output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 16, 3)

    def forward(self, x):
        x = F.gelu(self.conv(x))
        x = F.adaptive_avg_pool2d(x, 1)
        return x.squeeze(-1).squeeze(-1)


def get_inputs():
    return [torch.rand(8, 4, 18, 20)]


def get_init_inputs():
    return []
