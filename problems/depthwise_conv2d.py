"""nn.Conv2d(32, 32, (3, 5), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=32) with a bias, of a
16 x 32 x 255 x 192 fp32 tensor: the depthwise-convolution seed's window with an asymmetric kernel, a
stride, padding and dilation, and the per-channel weights and bias."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 32, kernel_size=(3, 5), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.rand(16, 32, 255, 192)]


def get_init_inputs():
    return []
