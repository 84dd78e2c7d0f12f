"""nn.ConvTranspose2d(32, 48, (3, 5), padding=(1, 2), output_padding=(0, 1), dilation=(1, 2)) with a bias, of an
8 x 32 x 128 x 192 fp32 tensor: a stride-1 transposed convolution whose output_padding makes the output one
column wider on one side only (the TMA-im2col path runs it as a forward convolution with the window flipped
and more padding behind than in front)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(32, 48, kernel_size=(3, 5), padding=(1, 2), output_padding=(0, 1),
                                       dilation=(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(8, 32, 128, 192)]


def get_init_inputs():
    return []
