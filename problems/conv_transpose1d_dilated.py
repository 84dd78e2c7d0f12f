"""nn.ConvTranspose1d(64, 64, 5, dilation=3) with a bias, of a 32 x 64 x 65536 fp32 tensor: a stride-1
transposed convolution (one phase, every tap valid)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose1d(64, 64, kernel_size=5, dilation=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(32, 64, 65536)]


def get_init_inputs():
    return []
