"""A transposed convolution, a training-mode BatchNorm, then the mean over the spatial dims subtracted, as
KernelBench level 2's 15 writes it at a small size: conv_then with two norm steps (the BatchNorm's channels,
then the centring's rows)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(4, 8, 3, stride=2, padding=1)
        self.batch_norm = nn.BatchNorm3d(8)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.batch_norm(x)
        return x - torch.mean(x, dim=(2, 3, 4), keepdim=True)


def get_inputs():
    return [torch.rand(2, 4, 5, 6, 7)]


def get_init_inputs():
    return []
