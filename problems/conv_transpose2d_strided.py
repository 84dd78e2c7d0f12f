"""nn.ConvTranspose2d(32, 48, 3, stride=4, padding=1, dilation=3) with a bias, of a 16 x 32 x 70 x 130 fp32
tensor: a transposed convolution whose stride exceeds the window's reach in some phases (no tap at all there)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(32, 48, kernel_size=3, stride=4, padding=1, dilation=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 32, 70, 130)]


def get_init_inputs():
    return []
