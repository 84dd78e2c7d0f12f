"""nn.MaxPool2d(3, stride=2, padding=1, dilation=2, ceil_mode=True) of a 16 x 32 x 255 x 255 fp32
tensor: the pool seed's window geometry with dilation and a ceil_mode edge window."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.rand(16, 32, 255, 255)]


def get_init_inputs():
    return []
