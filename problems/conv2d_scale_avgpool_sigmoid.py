"""A 2-d convolution (3 x 3, stride 1), a per-channel scale, a 4 x 4 average pooling, then a sigmoid. The scale
commutes with the pooling and the pooling of a convolution is a convolution: the seed folds the pooling into the
weights (a 6 x 6 kernel at stride 4, computed per call) and runs the library convolution at the pooled size
(conv_then's pooled head), so the 16x larger unpooled tensor is never written. 16 x 8 x 194 x 258 fp32 in,
32 channels out.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.scale = nn.Parameter(torch.rand(out_channels, 1, 1) + 0.5)
        self.pool = nn.AvgPool2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.pool(self.conv(x) * self.scale))


def get_inputs():
    return [torch.randn(16, 8, 194, 258)]


def get_init_inputs():
    return [8, 32]
