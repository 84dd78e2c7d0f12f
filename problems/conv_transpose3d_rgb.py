"""nn.ConvTranspose3d(3, 24, 3, stride=2, padding=1, output_padding=1), no bias, of a 4 x 3 x 12 x 30 x 40 fp32
tensor: a strided transposed layer of 3 channels, whose eight phases each have 1 to 8 taps (K at most 24); the
seed's direct path over the gather kernel's phases, with a 32-channel tile for 24 output channels."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose3d(3, 24, kernel_size=3, stride=2, padding=1, output_padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


def get_inputs():
    return [torch.randn(4, 3, 12, 30, 40)]


def get_init_inputs():
    return []
