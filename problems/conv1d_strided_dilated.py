"""nn.Conv1d(32, 96, 5, stride=3, padding=4, dilation=2, bias=False) of a 16 x 32 x 200003 fp32 tensor:
a 1-d convolution with stride and dilation over a long odd-length signal."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(32, 96, kernel_size=5, stride=3, padding=4, dilation=2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 32, 200003)]


def get_init_inputs():
    return []
